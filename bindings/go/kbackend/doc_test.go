package kbackend

// Every exported name of the package has a doc comment (go doc shows them; scripts/docs.sh
// writes the reference from them).

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"strings"
	"testing"
)

func TestEveryExportedNameIsDocumented(t *testing.T) {
	fset := token.NewFileSet()
	pkgs, err := parser.ParseDir(fset, ".", func(info fs.FileInfo) bool {
		return !strings.HasSuffix(info.Name(), "_test.go")
	}, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	var missing []string
	note := func(pos token.Pos, name string) {
		missing = append(missing, fset.Position(pos).String()+": "+name)
	}
	for _, pkg := range pkgs {
		for _, file := range pkg.Files {
			for _, decl := range file.Decls {
				switch d := decl.(type) {
				case *ast.FuncDecl:
					if d.Name.IsExported() && d.Doc == nil && exportedReceiver(d) {
						note(d.Pos(), d.Name.Name)
					}
				case *ast.GenDecl:
					for _, spec := range d.Specs {
						switch s := spec.(type) {
						case *ast.TypeSpec:
							if s.Name.IsExported() && s.Doc == nil && d.Doc == nil {
								note(s.Pos(), s.Name.Name)
							}
						case *ast.ValueSpec:
							for _, n := range s.Names {
								// a documented group (const ( ... )) documents its members
								if n.IsExported() && s.Doc == nil && s.Comment == nil && d.Doc == nil {
									note(n.Pos(), n.Name)
								}
							}
						}
					}
				}
			}
		}
	}
	if len(missing) > 0 {
		t.Fatalf("%d exported names without a doc comment:\n%s", len(missing),
			strings.Join(missing, "\n"))
	}
}

// Methods of unexported types are not part of the API.
func exportedReceiver(d *ast.FuncDecl) bool {
	if d.Recv == nil || len(d.Recv.List) == 0 {
		return true
	}
	typ := d.Recv.List[0].Type
	if star, ok := typ.(*ast.StarExpr); ok {
		typ = star.X
	}
	if id, ok := typ.(*ast.Ident); ok {
		return id.IsExported()
	}
	return true
}
