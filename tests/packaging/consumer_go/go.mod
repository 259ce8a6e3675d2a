module example.com/consumer

go 1.19

require kbackend.dev/kbackend v0.1.0

// The module from the repository: no module proxy reaches kbackend.dev here.
replace kbackend.dev/kbackend => ../../../bindings/go/kbackend
