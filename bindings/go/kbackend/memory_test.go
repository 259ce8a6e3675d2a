package kbackend

import (
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
	"time"
)

func rssMiB(t *testing.T) float64 {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		t.Skip("no /proc")
	}
	pages, _ := strconv.Atoi(strings.Fields(string(b))[1])
	return float64(pages*os.Getpagesize()) / (1 << 20)
}

// settle runs the collector until the live count stops falling (finalizers run on their own
// goroutine) or reaches want.
func settle(want int64) int64 {
	last := int64(-1)
	for i := 0; i < 100 && LiveTensors() > want; i++ {
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
		if now := LiveTensors(); now == last && want < 0 {
			break
		} else {
			last = now
		}
	}
	return LiveTensors()
}

// churn makes and drops about 4 tensors per round without closing them.
func churn(t *testing.T, rounds int, a *Tensor) {
	for i := 0; i < rounds; i++ {
		b, err := a.MulScalar(2)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := b.AddScalar(float64(i)); err != nil {
			t.Fatal(err)
		}
	}
}

func TestDroppedTensorsDoNotGrowMemory(t *testing.T) {
	a, _ := FromFloat32(make([]float32, 16), 16)
	live0 := settle(-1)
	// Warm-up: finalizers free on other OS threads, so glibc spreads the memory over a few
	// arenas before it is reused; wait until a round no longer grows (a leak never settles).
	// Two quiet rounds in a row end it; a leak of ~200 bytes a tensor grows ~20 MiB a round.
	rss0, quiet := rssMiB(t), 0
	for round := 0; round < 16 && quiet < 2; round++ {
		churn(t, 25000, a)
		settle(live0)
		debug.FreeOSMemory()
		rss := rssMiB(t)
		if rss-rss0 < 4 {
			quiet++
		} else {
			quiet = 0
		}
		rss0 = rss
	}
	// Three measured rounds of 100k tensors each: a leak grows every round, while allocator
	// noise shows up in single rounds, so the smallest growth is the one that counts.
	least := 1e9
	for round := 0; round < 3; round++ {
		rss0 = rssMiB(t)
		churn(t, 25000, a) // 100k tensors made and dropped
		if live := settle(live0); live != live0 {
			t.Fatalf("%d native references still held after GC (want %d)", live, live0)
		}
		debug.FreeOSMemory()
		if grew := rssMiB(t) - rss0; grew < least {
			least = grew
		}
	}
	// A leaked tensor costs at least ~300 bytes (handle, node, shape): >= 28 MiB a round. Below
	// that, finalizer threads spreading glibc arenas can still add a few MiB a round.
	if least > 24 {
		t.Fatalf("RSS grew by at least %.1f MiB in each of 3 rounds of 100k dropped tensors", least)
	}
	runtime.KeepAlive(a)
}

func TestKeptTensorsAreCounted(t *testing.T) {
	before := settle(-1)
	kept := make([]*Tensor, 100)
	for i := range kept {
		kept[i], _ = FromFloat32(make([]float32, 1<<16), 1<<16)
	}
	if LiveTensors() != before+100 {
		t.Fatalf("live %d, want %d", LiveTensors(), before+100)
	}
	for _, k := range kept {
		k.Close()
	}
	if LiveTensors() != before {
		t.Fatalf("live %d after Close, want %d", LiveTensors(), before)
	}
}
