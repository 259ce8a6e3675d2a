module kbackend.dev/kbackend

go 1.19
