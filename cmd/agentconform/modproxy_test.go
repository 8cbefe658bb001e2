package main

import (
	"archive/zip"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

// proxyVersion is the version at which moduleProxy serves this checkout.
const proxyVersion = "v0.42.0"

var (
	proxyOnce sync.Once
	proxyEnv  []string
	proxyErr  error
	proxyDir  string
)

// TestMain removes what the tests share across the package (the module
// proxy of moduleProxy) after they ran.
func TestMain(m *testing.M) {
	code := m.Run()
	if proxyDir != "" {
		os.RemoveAll(proxyDir)
	}
	os.Exit(code)
}

// moduleProxy serves this checkout, as it is on disk, from a module proxy
// in a directory (GOPROXY=file://…) at proxyVersion, and returns the
// environment for a go command that installs from it: the module from
// there, its dependencies from the module cache's download directory (a
// proxy too, so nothing is downloaded), into a module cache of its own
// (the user's must not keep a test version of this module), no checksum
// database: KEY=VALUE entries to add to os.Environ(). It is built once per
// test binary; with -short the test skips.
func moduleProxy(t *testing.T) []string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds agentconform from a module proxy; skipped with -short")
	}
	proxyOnce.Do(func() { proxyEnv, proxyErr = buildModuleProxy() })
	if proxyErr != nil {
		t.Fatal(proxyErr)
	}
	return proxyEnv
}

func buildModuleProxy() ([]string, error) {
	out, err := exec.Command("go", "env", "GOMODCACHE").Output()
	if err != nil {
		return nil, fmt.Errorf("go env GOMODCACHE: %w", err)
	}
	deps := filepath.Join(strings.TrimSpace(string(out)), "cache", "download")
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		return nil, err
	}
	proxyDir, err = os.MkdirTemp("", "agentconform-modproxy-")
	if err != nil {
		return nil, err
	}
	at := filepath.Join(proxyDir, "proxy", filepath.FromSlash(modulePath), "@v")
	if err := os.MkdirAll(at, 0o755); err != nil {
		return nil, err
	}
	gomod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		return nil, err
	}
	info, _ := json.Marshal(map[string]string{"Version": proxyVersion, "Time": "2026-01-01T00:00:00Z"})
	for name, data := range map[string][]byte{"list": []byte(proxyVersion + "\n"), proxyVersion + ".info": info, proxyVersion + ".mod": gomod} {
		if err := os.WriteFile(filepath.Join(at, name), data, 0o644); err != nil {
			return nil, err
		}
	}
	if err := zipModule(root, filepath.Join(at, proxyVersion+".zip")); err != nil {
		return nil, fmt.Errorf("zipping the module: %w", err)
	}
	modcache := filepath.Join(proxyDir, "modcache")
	return []string{
		"GOPROXY=file://" + filepath.ToSlash(filepath.Join(proxyDir, "proxy")) + ",file://" + filepath.ToSlash(deps),
		"GOMODCACHE=" + modcache, "GOFLAGS=-modcacherw", "GOSUMDB=off", "GONOSUMDB=", "GOPRIVATE=", "GONOPROXY=",
		"GOTOOLCHAIN=local", "GOWORK=off"}, nil
}

// zipModule writes the module zip of the module at root, as the proxy
// serves it: its files under module@version/. The files are those git
// knows or would add (ignored ones, such as the drivers' node_modules or a
// built binary, are no part of the module), read as they are on disk;
// without git, every regular file but the version control directory and
// installed node packages.
func zipModule(root, file string) error {
	files, err := moduleFiles(root)
	if err != nil {
		return err
	}
	f, err := os.Create(file)
	if err != nil {
		return err
	}
	zw := zip.NewWriter(f)
	for _, rel := range files {
		if err = addFile(zw, root, rel); err != nil {
			break
		}
	}
	if cerr := zw.Close(); err == nil {
		err = cerr
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// moduleFiles lists the module's files, relative to root, less those of
// the modules nested in it (a directory below root with a go.mod of its
// own, such as conformance/drivers/acp-go-sdk), which are no part of the
// module's zip: the go command refuses a zip that holds another go.mod.
func moduleFiles(root string) ([]string, error) {
	files, err := treeFiles(root)
	if err != nil {
		return nil, err
	}
	var nested []string
	for _, rel := range files {
		if filepath.Base(rel) == "go.mod" && filepath.Dir(rel) != "." {
			nested = append(nested, filepath.Dir(rel)+string(filepath.Separator))
		}
	}
	kept := files[:0]
	for _, rel := range files {
		if !slices.ContainsFunc(nested, func(dir string) bool { return strings.HasPrefix(rel, dir) }) {
			kept = append(kept, rel)
		}
	}
	return kept, nil
}

// treeFiles lists every file of the tree at root, relative to root.
func treeFiles(root string) ([]string, error) {
	if out, err := exec.Command("git", "-C", root, "ls-files", "-z", "-c", "-o", "--exclude-standard").Output(); err == nil {
		var files []string
		seen := map[string]bool{}
		for _, rel := range strings.Split(string(out), "\x00") {
			if rel == "" || seen[rel] {
				continue
			}
			seen[rel] = true
			st, err := os.Lstat(filepath.Join(root, filepath.FromSlash(rel)))
			if err != nil || !st.Mode().IsRegular() {
				continue // deleted, or a link
			}
			files = append(files, filepath.FromSlash(rel))
		}
		return files, nil
	}
	var files []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p != root && (d.Name() == ".git" || d.Name() == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if d.Name() == ".git" || !d.Type().IsRegular() {
			return nil
		}
		rel, err := filepath.Rel(root, p)
		files = append(files, rel)
		return err
	})
	return files, err
}

// addFile stores root/rel in the zip under module@version/.
func addFile(zw *zip.Writer, root, rel string) error {
	w, err := zw.CreateHeader(&zip.FileHeader{Name: modulePath + "@" + proxyVersion + "/" + filepath.ToSlash(rel), Method: zip.Store})
	if err != nil {
		return err
	}
	src, err := os.Open(filepath.Join(root, rel))
	if err != nil {
		return err
	}
	defer src.Close()
	_, err = io.Copy(w, src)
	return err
}
