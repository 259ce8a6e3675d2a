package kbackend

// A Keras 3 archive (tests/model_files/keras3/mlp.keras, saved by Keras 3.15) loaded, compared
// with what Keras computed (mlp_expected.txt: inputs, targets, predictions, test loss), trained
// and saved as an archive again.

import (
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// The committed model files: KB_MODEL_FILES, else the repository's, from this folder.
func modelFiles() string {
	if dir := os.Getenv("KB_MODEL_FILES"); dir != "" {
		return dir
	}
	return filepath.Join("..", "..", "..", "tests", "model_files")
}

func TestKeras3ArchiveLoadsPredictsTrainsAndSaves(t *testing.T) {
	dir := filepath.Join(modelFiles(), "keras3")
	text, err := os.ReadFile(filepath.Join(dir, "mlp_expected.txt"))
	if err != nil {
		t.Fatal(err)
	}
	fields := strings.Fields(string(text))
	number := func(i int) float64 {
		v, err := strconv.ParseFloat(fields[i], 64)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	rows, inputs, classes, kerasLoss := int(number(0)), int(number(1)), int(number(2)), number(3)
	x := make([]float32, rows*inputs)
	y := make([]float32, rows*classes)
	want := make([]float32, rows*classes)
	for r, at := 0, 4; r < rows; r++ {
		for _, part := range []struct {
			into  []float32
			width int
		}{{x, inputs}, {y, classes}, {want, classes}} {
			for i := 0; i < part.width; i++ {
				part.into[r*part.width+i] = float32(number(at))
				at++
			}
		}
	}
	xs := []*Tensor{f32(t, x, int64(rows), int64(inputs))}
	ys := []*Tensor{f32(t, y, int64(rows), int64(classes))}
	m, err := LoadModel(filepath.Join(dir, "mlp.keras"), true)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	predict := func(m *Model) []float32 {
		out, err := m.Predict(xs, 32, 0)
		if err != nil {
			t.Fatal(err)
		}
		return vals(t)(out[0], nil)
	}
	for i, p := range predict(m) {
		if math.Abs(float64(p-want[i])) > 1e-5 {
			t.Fatalf("prediction %d: Keras %v, got %v", i, want[i], p)
		}
	}
	if loss := vals(t)(m.TestOnBatch(xs, ys)); math.Abs(float64(loss[0])-kerasLoss) > 1e-4*kerasLoss {
		t.Fatalf("test loss: Keras %v, got %v", kerasLoss, loss[0])
	}
	for step := 0; step < 3; step++ {
		if _, err := m.TrainOnBatch(xs, ys); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join(t.TempDir(), "again.keras") // an archive again, by the extension
	if err := m.Save(path, true); err != nil {
		t.Fatal(err)
	}
	again, err := LoadModel(path, true)
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	trained, loaded := predict(m), predict(again)
	for i := range trained {
		if trained[i] != loaded[i] {
			t.Fatalf("prediction %d after the round trip: %v, then %v", i, trained[i], loaded[i])
		}
	}
}

// The model's inference graph as an ONNX file (the plugin's checker passed on it), and the
// refusal of an opset the export does not write.
func TestModelsExportToOnnx(t *testing.T) {
	m, err := LoadModel(filepath.Join(modelFiles(), "keras3", "mlp.keras"), false)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	path := filepath.Join(t.TempDir(), "mlp.onnx")
	options, err := DefaultExportOnnxOptions().OptionsJSON()
	if err != nil {
		t.Fatal(err)
	}
	if err := m.ExportOnnx(path, options); err != nil {
		t.Fatal(err)
	}
	if info, err := os.Stat(path); err != nil || info.Size() < 1000 {
		t.Fatalf("the ONNX file: %v, %v", info, err)
	}
	bad := DefaultExportOnnxOptions()
	bad.Opset = 18
	options, _ = bad.OptionsJSON()
	if err := m.ExportOnnx(path, options); err == nil || !strings.Contains(err.Error(), "opset 18") {
		t.Fatalf("opset 18: %v", err)
	}
}
