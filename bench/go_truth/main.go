// Command gotruth lists the definitions and static call edges of a Go tree as Go's own type
// checker sees them (go/packages + go/types), for scoring graphctx's Go front end. It shares no
// code with the indexer.
//
//	gotruth -dir ROOT [-out FILE] [patterns...]      (default pattern: ./...; "std" for GOROOT/src)
//
// One JSON object per line:
//
//	{"kind":"def","key":"net/http/client.go::(*Client).Do","qname":"net/http.(*Client).Do",
//	 "type":"method","file":"net/http/client.go","start":581,"end":583,"test":false}
//	{"kind":"call","caller":"<key>","callee":"<key>","file":"<caller file>","line":590}
//
// A key is the file (relative to ROOT) and the name within its package (`F`, `T`, `(*T).M`, `T.M`).
// Calls are those with a static callee (typeutil.StaticCallee: functions and concrete methods, not
// interface methods or function values), made inside a function or method declaration (closures
// count for the declaration); callees outside ROOT are left out. Loaded for GOOS=linux GOARCH=amd64
// CGO_ENABLED=0 with tests.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"golang.org/x/tools/go/packages"
	"golang.org/x/tools/go/types/typeutil"
)

type record struct {
	Kind   string `json:"kind"`
	Key    string `json:"key,omitempty"`
	QName  string `json:"qname,omitempty"`
	Type   string `json:"type,omitempty"`
	File   string `json:"file,omitempty"`
	Start  int    `json:"start,omitempty"`
	End    int    `json:"end,omitempty"`
	Test   bool   `json:"test,omitempty"`
	Caller string `json:"caller,omitempty"`
	Callee string `json:"callee,omitempty"`
	Line   int    `json:"line,omitempty"`
}

func main() {
	dir := flag.String("dir", ".", "root of the tree (paths are relative to it)")
	out := flag.String("out", "-", "output file")
	flag.Parse()
	patterns := flag.Args()
	if len(patterns) == 0 {
		patterns = []string{"./..."}
	}
	root, err := filepath.Abs(*dir)
	check(err)
	cfg := &packages.Config{
		Mode: packages.NeedName | packages.NeedFiles | packages.NeedSyntax | packages.NeedTypes |
			packages.NeedTypesInfo | packages.NeedImports | packages.NeedDeps,
		Dir:   root,
		Tests: true,
		Env:   append(os.Environ(), "GOOS=linux", "GOARCH=amd64", "CGO_ENABLED=0", "GOFLAGS=-mod=mod"),
	}
	pkgs, err := packages.Load(cfg, patterns...)
	check(err)
	fmt.Fprintf(os.Stderr, "gotruth: %d packages matched\n", len(pkgs))
	w := os.Stdout
	if *out != "-" {
		w, err = os.Create(*out)
		check(err)
		defer w.Close()
	}
	enc := json.NewEncoder(w)
	seen := map[string]bool{}
	var records []record
	errors := 0
	packages.Visit(pkgs, nil, func(p *packages.Package) {
		errors += len(p.Errors)
		for _, file := range p.Syntax {
			name := p.Fset.File(file.Pos()).Name()
			rel, ok := relative(root, name)
			if !ok || seen[name] {
				continue
			}
			seen[name] = true
			records = append(records, fileRecords(p, file, rel, root)...)
		}
	})
	sort.SliceStable(records, func(i, j int) bool { return records[i].Kind < records[j].Kind })
	for _, r := range records {
		check(enc.Encode(r))
	}
	fmt.Fprintf(os.Stderr, "gotruth: %d records, %d files, %d package errors\n", len(records), len(seen), errors)
}

func relative(root, name string) (string, bool) {
	rel, err := filepath.Rel(root, name)
	if err != nil || strings.HasPrefix(rel, "..") {
		return "", false
	}
	return filepath.ToSlash(rel), true
}

func pkgPath(p *types.Package, file string) string {
	path := p.Path()
	if strings.HasSuffix(file, "_test.go") && strings.HasSuffix(p.Name(), "_test") && !strings.HasSuffix(path, "_test") {
		path += "_test"
	}
	return path
}

func member(fn *types.Func) string {
	sig := fn.Type().(*types.Signature)
	recv := sig.Recv()
	if recv == nil {
		return fn.Name()
	}
	t := recv.Type()
	pointer := false
	if ptr, ok := t.(*types.Pointer); ok {
		t, pointer = ptr.Elem(), true
	}
	name := "?"
	switch n := t.(type) {
	case *types.Named:
		name = n.Obj().Name()
	case *types.Alias:
		name = n.Obj().Name()
	}
	if pointer {
		return "(*" + name + ")." + fn.Name()
	}
	return name + "." + fn.Name()
}

func isTest(rel, name string) bool {
	if !strings.HasSuffix(rel, "_test.go") {
		return false
	}
	for _, prefix := range []string{"Test", "Benchmark", "Example", "Fuzz"} {
		if strings.HasPrefix(name, prefix) {
			rest := name[len(prefix):]
			return rest == "" || !(rest[0] >= 'a' && rest[0] <= 'z')
		}
	}
	return false
}

func fileRecords(p *packages.Package, file *ast.File, rel, root string) []record {
	var out []record
	fset := p.Fset
	line := func(pos token.Pos) int { return fset.Position(pos).Line }
	path := pkgPath(p.Types, rel)
	inits := 0
	for _, decl := range file.Decls {
		switch d := decl.(type) {
		case *ast.FuncDecl:
			fn, _ := p.TypesInfo.Defs[d.Name].(*types.Func)
			if fn == nil {
				continue
			}
			m := member(fn)
			if m == "init" || m == "_" {
				if inits > 0 || m == "_" {
					continue // repeated init/_ funcs: not addressable by name
				}
				inits++
			}
			kind := "function"
			if d.Recv != nil {
				kind = "method"
			}
			key := rel + "::" + m
			out = append(out, record{Kind: "def", Key: key, QName: path + "." + m, Type: kind, File: rel,
				Start: line(d.Pos()), End: line(d.End()), Test: kind == "function" && isTest(rel, d.Name.Name)})
			if d.Body == nil {
				continue
			}
			ast.Inspect(d.Body, func(n ast.Node) bool {
				call, ok := n.(*ast.CallExpr)
				if !ok {
					return true
				}
				callee := typeutil.StaticCallee(p.TypesInfo, call)
				if callee == nil {
					return true
				}
				callee = callee.Origin()
				if callee.Pkg() == nil {
					return true
				}
				cpos := fset.Position(callee.Pos())
				crel, ok := relative(root, cpos.Filename)
				if !ok || cpos.Filename == "" {
					return true
				}
				out = append(out, record{Kind: "call", Caller: key, Callee: crel + "::" + member(callee),
					File: rel, Line: line(call.Lparen)})
				return true
			})
		case *ast.GenDecl:
			if d.Tok != token.TYPE {
				continue
			}
			for _, spec := range d.Specs {
				ts := spec.(*ast.TypeSpec)
				start, end := line(ts.Pos()), line(ts.End())
				if !d.Lparen.IsValid() {
					start, end = line(d.Pos()), line(d.End())
				}
				out = append(out, record{Kind: "def", Key: rel + "::" + ts.Name.Name, QName: path + "." + ts.Name.Name,
					Type: "type", File: rel, Start: start, End: end})
			}
		}
	}
	return out
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "gotruth:", err)
		os.Exit(1)
	}
}
