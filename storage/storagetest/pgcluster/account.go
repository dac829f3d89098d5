package pgcluster

import (
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"strconv"
	"strings"
	"syscall"
)

// AccountName is the system user the cluster runs as when the caller is root: initdb and the
// server refuse to run as root, and CI runs as root. It is created on first use.
const AccountName = "parley-test"

// account is the unprivileged user that owns the cluster's folder and runs its processes.
type account struct {
	name     string
	uid, gid uint32
}

// serverAccount returns nil when the caller is not root: then the cluster simply runs as the
// caller. As root it returns AccountName, creating it if needed, or else nobody.
func serverAccount() (*account, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	if a, err := lookupAccount(AccountName); err == nil {
		return a, nil
	}
	// Several test processes may get here at once: whoever loses the race finds the user made
	// by the winner, so the outcome of useradd matters less than the lookup after it.
	out, addErr := exec.Command("useradd", "--system", "--no-create-home", "--home-dir", "/nonexistent",
		"--shell", "/usr/sbin/nologin", AccountName).CombinedOutput()
	if a, err := lookupAccount(AccountName); err == nil {
		return a, nil
	}
	if a, err := lookupAccount("nobody"); err == nil {
		return a, nil
	}
	return nil, fmt.Errorf("running as root, Postgres needs an unprivileged user, but useradd %s failed (%v: %s) and there is no user nobody",
		AccountName, addErr, strings.TrimSpace(string(out)))
}

func lookupAccount(name string) (*account, error) {
	u, err := user.Lookup(name)
	if err != nil {
		return nil, err
	}
	uid, err := strconv.ParseUint(u.Uid, 10, 32)
	if err != nil {
		return nil, fmt.Errorf("user %s: uid %q: %v", name, u.Uid, err)
	}
	gid, err := strconv.ParseUint(u.Gid, 10, 32)
	if err != nil {
		return nil, fmt.Errorf("user %s: gid %q: %v", name, u.Gid, err)
	}
	return &account{name: name, uid: uint32(uid), gid: uint32(gid)}, nil
}

// runAs makes cmd run as the account (no supplementary groups: root's must not leak).
func (a *account) runAs(cmd *exec.Cmd) {
	if a == nil {
		return
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Credential: &syscall.Credential{Uid: a.uid, Gid: a.gid, Groups: []uint32{}},
	}
}

// own hands the folder to the account, so the server can write its data, socket and log there.
func (a *account) own(dir string) error {
	if a == nil {
		return nil
	}
	if err := os.Chown(dir, int(a.uid), int(a.gid)); err != nil {
		return fmt.Errorf("cannot give %s to user %s: %v", dir, a.name, err)
	}
	return nil
}
