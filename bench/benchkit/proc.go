package benchkit

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/slotd/slotd/netio/resp"
)

// Proc is a server process a bench started on 127.0.0.1: its own process
// group, killed with the bench if the bench dies (Pdeathsig), stdout and
// stderr in Log.
type Proc struct {
	Name string
	Port int
	Argv []string
	Log  string

	cmd  *exec.Cmd
	done chan struct{} // closed when the process has exited
}

// FreePort returns a TCP port on 127.0.0.1 that was free a moment ago.
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// StartProc runs argv (which must make the server listen on port) with its
// output in logPath and env added to the environment, and waits until the
// server answers PING.
func StartProc(ctx context.Context, name string, port int, argv []string, logPath string, env ...string) (*Proc, error) {
	p := &Proc{Name: name, Port: port, Argv: argv, Log: logPath, done: make(chan struct{})}
	logf, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	defer logf.Close()
	p.cmd = exec.Command(argv[0], argv[1:]...)
	p.cmd.Stdout, p.cmd.Stderr = logf, logf
	p.cmd.Env = append(os.Environ(), env...)
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := p.cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", name, err)
	}
	go func() { _ = p.cmd.Wait(); close(p.done) }()
	cli := p.Client()
	defer cli.Close()
	err = p.Poll(ctx, 15*time.Second, func() bool {
		r, err := cli.Do("PING")
		return err == nil && r.Str == "PONG"
	})
	if err != nil {
		p.Stop()
		return nil, fmt.Errorf("%s did not come up: %w\n--- %s ---\n%s", name, err, logPath, Tail(logPath, 20))
	}
	return p, nil
}

// Addr is host:port of the server.
func (p *Proc) Addr() string { return "127.0.0.1:" + strconv.Itoa(p.Port) }

// Pid is the process id (taskset execs, so a pinned server keeps it).
func (p *Proc) Pid() int { return p.cmd.Process.Pid }

// Client returns a new RESP client for the server.
func (p *Proc) Client() *resp.Client {
	return &resp.Client{Addr: p.Addr(), Timeout: 5 * time.Second}
}

// CPU is the process's user+system CPU time so far.
func (p *Proc) CPU() (time.Duration, error) { return ProcCPU(p.Pid()) }

// Exited reports whether the process has ended, with its status.
func (p *Proc) Exited() (bool, string) {
	select {
	case <-p.done:
		return true, fmt.Sprint(p.cmd.ProcessState)
	default:
		return false, ""
	}
}

// Poll calls cond every 20 ms until it holds; it fails when the process
// exits, ctx ends or timeout passes.
func (p *Proc) Poll(ctx context.Context, timeout time.Duration, cond func() bool) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	t := time.NewTicker(20 * time.Millisecond) // polling an external process
	defer t.Stop()
	for !cond() {
		select {
		case <-p.done:
			return fmt.Errorf("%s exited (%v)", p.Name, p.cmd.ProcessState)
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
	}
	return nil
}

// Stop sends SIGTERM to the process group, then SIGKILL after 10 s.
func (p *Proc) Stop() {
	pgid := -p.cmd.Process.Pid
	_ = syscall.Kill(pgid, syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
		_ = syscall.Kill(pgid, syscall.SIGKILL)
		<-p.done
	}
}

// BuildSlotd builds ./cmd/slotd of the module the working directory is in
// into dir and returns the binary's path.
func BuildSlotd(ctx context.Context, dir string) (string, error) {
	gomod, err := exec.CommandContext(ctx, "go", "env", "GOMOD").Output()
	if err != nil || strings.TrimSpace(string(gomod)) == "" || strings.TrimSpace(string(gomod)) == os.DevNull {
		return "", errors.New("cannot find the module root (run from inside the slotd module, or pass -slotd)")
	}
	bin := filepath.Join(dir, "slotd")
	build := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cmd/slotd")
	build.Dir = filepath.Dir(strings.TrimSpace(string(gomod)))
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	fmt.Println("building slotd:", strings.Join(build.Args, " "))
	if err := build.Run(); err != nil {
		return "", fmt.Errorf("building slotd: %w", err)
	}
	return bin, nil
}

// ParseInts reads a comma-separated list of positive integers (a flag).
func ParseInts(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		v, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || v <= 0 {
			return nil, fmt.Errorf("bad value %q", f)
		}
		out = append(out, v)
	}
	return out, nil
}

// Main runs f with a context that SIGINT and SIGTERM cancel (so deferred
// clean-ups stop the servers); an error ends the process with status 1.
func Main(name string, f func(ctx context.Context) error) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := f(ctx)
	stop()
	if err != nil {
		Fatal(name, err)
	}
}

// Fatal prints "name: err" to stderr and exits with status 1.
func Fatal(name string, err error) {
	fmt.Fprintln(os.Stderr, name+":", err)
	os.Exit(1)
}
