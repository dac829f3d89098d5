package pgcluster

import (
	"os"
	"path/filepath"
	"syscall"
)

// memoryFolder is Linux's tmpfs. A cluster there creates a database from a template in about
// 15 ms, against a quarter of a second on an ordinary disk, where even with fsync off the
// few hundred files of every new database cost their metadata writes; tests create one
// database each, so this decides how long a test run takes.
const memoryFolder = "/dev/shm"

// minMemoryFree is the least free space in memoryFolder for the cluster to go there: a cluster
// takes about 40 MB and every open test database 8 MB more. Containers often mount only 64 MB
// there, too little for parallel tests.
const minMemoryFree = 1 << 30

// tempParent chooses the folder to make the cluster's folder in: memoryFolder when it has room,
// else the usual temporary folder. The account must be able to pass through every folder
// above its own, which a TMPDIR under /root, say, does not allow; /tmp always does.
func tempParent(a *account) string {
	if freeBytes(memoryFolder) >= minMemoryFree && traversableByOthers(memoryFolder) {
		return memoryFolder
	}
	return diskParent(a)
}

// diskParent is the usual temporary folder, or /tmp when the account cannot pass into it: on
// a disk, where the machine has one (Options.OnDisk).
func diskParent(a *account) string {
	dir := os.TempDir()
	if a == nil || traversableByOthers(dir) {
		return dir
	}
	return "/tmp"
}

func freeBytes(dir string) uint64 {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return 0
	}
	return st.Bavail * uint64(st.Bsize)
}

// traversableByOthers reports whether every folder from dir up to / lets other users through.
func traversableByOthers(dir string) bool {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return false
	}
	for {
		info, err := os.Stat(dir)
		if err != nil || info.Mode().Perm()&0o001 == 0 {
			return false
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return true
		}
		dir = parent
	}
}
