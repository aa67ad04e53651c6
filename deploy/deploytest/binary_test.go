package deploytest

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"helm.sh/helm/v3/pkg/chartutil"
)

// TestChartFlagsRunTheBinary runs the real idforge binary with the
// arguments and environment the chart gives its container (single-pod
// SQLite values, pod idforge-2), only moving the listen addresses to
// loopback and /data to a temporary directory: the flags must be ones
// serve accepts, k8s:// must make the ordinal the worker ID, and SIGTERM
// must stop the node well within terminationGracePeriodSeconds.
func TestChartFlagsRunTheBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	// IDFORGE_BINARY names a binary already built, else a build of our
	// own.
	bin := os.Getenv("IDFORGE_BINARY")
	if bin == "" {
		bin = filepath.Join(t.TempDir(), "idforge")
		build := exec.Command("go", "build", "-o", bin, "./cmd/idforge")
		build.Dir = "../.."
		if out, err := build.CombinedOutput(); err != nil {
			t.Fatalf("go build: %v\n%s", err, out)
		}
	}
	values, err := chartutil.ReadValuesFile(filepath.Join(chartDir, "ci", "single-sqlite-values.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	o, _ := renderObjects(t, loadChart(t), values)
	c := podOf(o).Containers[0]
	data := t.TempDir()
	var args []string
	for _, a := range c.Args {
		switch {
		case strings.HasPrefix(a, "--http="):
			a = "--http=127.0.0.1:0"
		case strings.HasPrefix(a, "--grpc="):
			a = "--grpc=127.0.0.1:0"
		case a == "--data=/data":
			a = "--data=" + data
		}
		args = append(args, a)
	}
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}
	for _, e := range c.Env {
		switch {
		case e.Name == "POD_NAME":
			env = append(env, "POD_NAME=idforge-2")
		case e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil:
			if v, ok := o.secrets[0].StringData[e.ValueFrom.SecretKeyRef.Key]; ok {
				env = append(env, e.Name+"="+v)
			}
		default:
			env = append(env, e.Name+"="+e.Value)
		}
	}
	cmd := exec.Command(bin, args...)
	cmd.Env = env
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	lines := make(chan string, 100)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			select {
			case lines <- sc.Text():
			default:
			}
		}
		close(lines)
		exited <- cmd.Wait()
	}()
	t.Cleanup(func() { cmd.Process.Kill() })
	serving := regexp.MustCompile(`msg="idforge serving".* worker=(\d+)`)
	var log []string
	timeout := time.After(2 * time.Minute)
wait:
	for {
		select {
		case line, ok := <-lines:
			if !ok {
				t.Fatalf("idforge %q exited before serving:\n%s", args, strings.Join(log, "\n"))
			}
			log = append(log, line)
			if m := serving.FindStringSubmatch(line); m != nil {
				if m[1] != "2" {
					t.Errorf("pod idforge-2 serves as worker %s, want 2", m[1])
				}
				break wait
			}
		case <-timeout:
			t.Fatalf("idforge %q did not serve within 2 minutes:\n%s", args, strings.Join(log, "\n"))
		}
	}
	grace := time.Duration(*podOf(o).TerminationGracePeriodSeconds) * time.Second
	cmd.Process.Signal(syscall.SIGTERM)
	go func() {
		for range lines {
		}
	}()
	select {
	case err := <-exited:
		if err != nil {
			t.Errorf("after SIGTERM: %v", err)
		}
	case <-time.After(grace):
		t.Errorf("still running %v after SIGTERM, the chart's terminationGracePeriodSeconds", grace)
	}
}
