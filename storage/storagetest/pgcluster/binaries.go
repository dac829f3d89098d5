package pgcluster

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// ErrNotInstalled means that no initdb and pg_ctl were found.
var ErrNotInstalled = errors.New("no initdb and pg_ctl on PATH or in /usr/lib/postgresql/*/bin")

// debianRoot is where Debian and Ubuntu install the server binaries, one folder per major
// version, without putting them on PATH.
const debianRoot = "/usr/lib/postgresql"

// FindBinaries returns the folder holding initdb and pg_ctl: the one on PATH if there is one
// (what the user chose wins), else the newest version under /usr/lib/postgresql.
func FindBinaries() (string, error) {
	for _, dir := range candidates() {
		if isExecutable(filepath.Join(dir, "initdb")) && isExecutable(filepath.Join(dir, "pg_ctl")) {
			return dir, nil
		}
	}
	return "", ErrNotInstalled
}

func candidates() []string {
	var dirs []string
	if initdb, err := exec.LookPath("initdb"); err == nil {
		dirs = append(dirs, filepath.Dir(initdb))
	}
	if versions, err := os.ReadDir(debianRoot); err == nil {
		var names []string
		for _, v := range versions {
			names = append(names, v.Name())
		}
		for _, name := range newestFirst(names) {
			dirs = append(dirs, filepath.Join(debianRoot, name, "bin"))
		}
	}
	return dirs
}

// newestFirst orders version folder names such as "9.6", "15" and "17" by their numbers, so
// that "9.6" comes after "15"; names that are not versions come last.
func newestFirst(names []string) []string {
	sorted := append([]string(nil), names...)
	sort.SliceStable(sorted, func(i, j int) bool {
		a, aok := versionNumbers(sorted[i])
		b, bok := versionNumbers(sorted[j])
		if aok != bok {
			return aok
		}
		for k := 0; k < len(a) && k < len(b); k++ {
			if a[k] != b[k] {
				return a[k] > b[k]
			}
		}
		return len(a) > len(b)
	})
	return sorted
}

func versionNumbers(name string) ([]int, bool) {
	var numbers []int
	for _, part := range strings.Split(name, ".") {
		n, err := strconv.Atoi(part)
		if err != nil {
			return nil, false
		}
		numbers = append(numbers, n)
	}
	return numbers, true
}

func isExecutable(path string) bool {
	info, err := os.Stat(path)
	return err == nil && info.Mode().IsRegular() && info.Mode().Perm()&0o111 != 0
}

// majorVersion reads the major version initdb wrote into a data folder.
func majorVersion(dataDir string) (string, error) {
	b, err := os.ReadFile(filepath.Join(dataDir, "PG_VERSION"))
	if err != nil {
		return "", fmt.Errorf("cannot read the server version: %v", err)
	}
	return strings.TrimSpace(string(b)), nil
}
