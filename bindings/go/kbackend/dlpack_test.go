package kbackend

// DLPack round trips through the C ABI: a value lent and taken back without a copy, both
// structs, ownership passing on success only.

import "testing"

func TestDLPackRoundTrips(t *testing.T) {
	x, err := FromFloat32([]float32{1, 2, 3, 4}, 2, 2)
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	for _, versioned := range []bool{true, false} {
		lend := x.ToDLPack
		if !versioned {
			lend = x.ToDLPackUnversioned
		}
		d, err := lend(DlpackCopyNever)
		if err != nil {
			t.Fatal(err)
		}
		if d.Pointer() == nil || d.Versioned() != versioned {
			t.Fatalf("versioned %v: %v", versioned, d)
		}
		y, err := FromDLPack(d, DlpackCopyNever)
		if err != nil {
			t.Fatal(err)
		}
		if d.Pointer() != nil {
			t.Fatal("taken, the managed tensor is still the program's")
		}
		got, err := y.Float32s()
		if err != nil || len(got) != 4 || got[0] != 1 || got[3] != 4 {
			t.Fatalf("versioned %v: %v, %v", versioned, got, err)
		}
		y.Close()
		// A taken managed tensor cannot be taken again: the pointer is gone.
		if _, err := FromDLPack(d, DlpackCopyNever); err == nil {
			t.Fatal("a managed tensor taken twice")
		}
	}
	// A copy, released by the program.
	c, err := x.ToDLPack(DlpackCopyAlways)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Release(); err != nil || c.Pointer() != nil {
		t.Fatal("release", err)
	}
	if err := c.Release(); err != nil {
		t.Fatal("a second release", err)
	}
}
