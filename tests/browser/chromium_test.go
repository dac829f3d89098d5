package browser

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// The browser is Debian's chromium. When it is missing the tests install it, as root, the way
// a clean CI machine gets it; when they cannot, they fail and say what to do.
const (
	chromiumCommand = "chromium"
	chromiumPackage = "chromium"
	installTimeout  = 15 * time.Minute
)

// chromiumPath finds chromium on PATH, installing it first when it is missing.
func chromiumPath() (string, error) {
	if path, err := exec.LookPath(chromiumCommand); err == nil {
		return path, nil
	}
	if err := installChromium(); err != nil {
		return "", fmt.Errorf("no %s found, and installing it failed: %w "+
			"(install it as root with: apt-get update && apt-get install -y %s)", chromiumCommand, err, chromiumPackage)
	}
	path, err := exec.LookPath(chromiumCommand)
	if err != nil {
		return "", fmt.Errorf("apt-get installed %s, but %s is still not on PATH: %w", chromiumPackage, chromiumCommand, err)
	}
	return path, nil
}

// installChromium runs apt-get install, and when that fails (on a fresh machine the package
// lists are empty or stale) apt-get update and the install once more.
func installChromium() error {
	if os.Geteuid() != 0 {
		return errors.New("the tests install it only when they run as root")
	}
	aptGet, err := exec.LookPath("apt-get")
	if err != nil {
		return errors.New("apt-get is not on PATH")
	}
	ctx, cancel := context.WithTimeout(context.Background(), installTimeout)
	defer cancel()
	install := []string{"install", "-y", chromiumPackage}
	if firstErr := runAptGet(ctx, aptGet, install...); firstErr != nil {
		if err := runAptGet(ctx, aptGet, "update"); err != nil {
			return fmt.Errorf("%v; then %v", firstErr, err)
		}
		return runAptGet(ctx, aptGet, install...)
	}
	return nil
}

// runAptGet runs apt-get without questions, waiting for a lock another apt holds, with its
// output on the test's standard error so that a slow or failing install explains itself.
func runAptGet(ctx context.Context, aptGet string, args ...string) error {
	args = append([]string{"-o", "DPkg::Lock::Timeout=300", "-q"}, args...)
	fmt.Fprintf(os.Stderr, "browser tests: %s %v\n", aptGet, args)
	cmd := exec.CommandContext(ctx, aptGet, args...)
	cmd.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive")
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("apt-get %v: %w", args, err)
	}
	return nil
}

// startBrowser starts one headless Chromium for the test and everything under it, and stops
// it when the test ends. Scenarios each take a fresh browser context from it (newTab), so
// they share no cookies.
func startBrowser(t *testing.T) context.Context {
	t.Helper()
	path, err := chromiumPath()
	if err != nil {
		t.Fatal(err)
	}
	// A profile of its own, beside the test binary: go test removes that folder after the
	// run even when the process ends through os.Exit.
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	profile, err := os.MkdirTemp(filepath.Dir(self), "chromium-profile-")
	if err != nil {
		t.Fatal(err)
	}
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(),
		chromedp.ExecPath(path),
		chromedp.UserDataDir(profile),
		chromedp.Headless,
		chromedp.NoSandbox, // as root (CI) Chromium refuses to start with its sandbox
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		// Without these Chromium reaches out to Google's services on start, and on a machine
		// that allows only loopback its own connections are refused.
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("disable-extensions", true),
		chromedp.Flag("disable-features", "Translate,OptimizationHints,MediaRouter"),
		chromedp.Flag("metrics-recording-only", true),
		chromedp.Flag("password-store", "basic"),
		chromedp.Flag("force-color-profile", "srgb"),
		chromedp.Flag("hide-scrollbars", true),
	)
	browserCtx, cancelBrowser := chromedp.NewContext(allocCtx)
	// Run with no actions starts the browser now, so that a Chromium that cannot start fails
	// here with its own words rather than in the first scenario.
	if err := chromedp.Do(browserCtx); err != nil {
		cancelBrowser()
		cancelAlloc()
		t.Fatalf("starting %s: %v", path, err)
	}
	t.Cleanup(func() {
		cancelBrowser()
		cancelAlloc()
		_ = os.RemoveAll(profile)
	})
	return browserCtx
}
