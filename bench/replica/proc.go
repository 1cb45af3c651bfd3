package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/slotd/slotd/bench/benchkit"
)

// proc is one server process (a primary or a real replica).
type proc struct {
	kind string // "slotd" or "redis"
	port int
	argv []string
	cmd  *exec.Cmd
	log  string
	done chan struct{}
}

func (p *proc) addr() string { return "127.0.0.1:" + strconv.Itoa(p.port) }

// launch starts a server of the given kind in its own directory under
// tmp, pinned to cpus when cpus is not empty, with extra directives
// appended, and waits until it answers PING.
func launch(o *options, kind, tmp, cpus string, extra ...string) (*proc, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	port := l.Addr().(*net.TCPAddr).Port
	_ = l.Close()
	dir, err := os.MkdirTemp(tmp, kind+"-")
	if err != nil {
		return nil, err
	}
	var argv []string
	if cpus != "" {
		argv = []string{"taskset", "-c", cpus}
	}
	// DEBUG DIGEST is for the replica check.
	common := []string{"--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
		"--dir", dir, "--enable-debug-command", "local"}
	if kind == "slotd" {
		argv = append(argv, o.slotdBin)
		argv = append(argv, common...)
		argv = append(argv, "--loglevel", "warning")
	} else {
		argv = append(argv, o.redisBin)
		argv = append(argv, common...)
		// No diskless-sync delay: a real replica's initial sync does not
		// wait 5 seconds.
		argv = append(argv, "--repl-diskless-sync-delay", "0")
	}
	argv = append(argv, o.extra[kind]...)
	argv = append(argv, extra...)
	p := &proc{kind: kind, port: port, argv: argv, log: filepath.Join(dir, "log"), done: make(chan struct{})}
	logf, err := os.Create(p.log)
	if err != nil {
		return nil, err
	}
	defer logf.Close()
	p.cmd = exec.Command(argv[0], argv[1:]...)
	p.cmd.Stdout, p.cmd.Stderr = logf, logf
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if kind == "slotd" && o.cpuProfile != "" {
		p.cmd.Env = append(os.Environ(), "SLOTD_CPUPROFILE="+o.cpuProfile)
	}
	if err := p.cmd.Start(); err != nil {
		return nil, err
	}
	go func() { _ = p.cmd.Wait(); close(p.done) }()
	err = poll(15*time.Second, func() (bool, error) {
		select {
		case <-p.done:
			return false, fmt.Errorf("exited (%v)", p.cmd.ProcessState)
		default:
		}
		r, err := query(p.addr(), "PING")
		return err == nil && r == "PONG", nil
	})
	if err != nil {
		p.stop()
		return nil, fmt.Errorf("%s did not start: %w\n%s", kind, err, p.tail())
	}
	return p, nil
}

// stop ends the process group (SIGTERM, then SIGKILL after 10 s; a
// profiled slotd writes its profile on SIGTERM).
func (p *proc) stop() {
	_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
		_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
		<-p.done
	}
}

func (p *proc) alive() bool {
	select {
	case <-p.done:
		return false
	default:
		return true
	}
}

// cpu returns the process's user+system CPU time so far.
func (p *proc) cpu() (time.Duration, error) { return benchkit.ProcCPU(p.cmd.Process.Pid) }

func (p *proc) tail() string { return benchkit.Tail(p.log, 15) }

// info returns the fields of INFO section as a map.
func (p *proc) info(section string) (map[string]string, error) {
	s, err := query(p.addr(), "INFO", section)
	if err != nil {
		return nil, err
	}
	m := map[string]string{}
	for _, line := range strings.Split(s, "\n") {
		if k, v, ok := strings.Cut(strings.TrimSpace(line), ":"); ok {
			m[k] = v
		}
	}
	return m, nil
}

// infoInt reads one integer field of INFO section.
func (p *proc) infoInt(section, field string) (int64, error) {
	m, err := p.info(section)
	if err != nil {
		return 0, err
	}
	v, ok := m[field]
	if !ok {
		return 0, fmt.Errorf("no %s in INFO %s", field, section)
	}
	return strconv.ParseInt(v, 10, 64)
}

// replicaField returns key=value from INFO replication's slave0 line.
func replicaField(m map[string]string, key string) string {
	for _, kv := range strings.Split(m["slave0"], ",") {
		if k, v, ok := strings.Cut(kv, "="); ok && k == key {
			return v
		}
	}
	return ""
}

// query sends one command and returns its reply as a string (simple,
// bulk or integer); an error reply is returned as an error.
func query(addr string, args ...string) (string, error) {
	c, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err != nil {
		return "", err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := c.Write(encode(args...)); err != nil {
		return "", err
	}
	r := bufio.NewReader(c)
	line, err := r.ReadString('\n')
	if err != nil {
		return "", err
	}
	line = strings.TrimRight(line, "\r\n")
	if line == "" {
		return "", errors.New("empty reply")
	}
	switch line[0] {
	case '+', ':':
		return line[1:], nil
	case '-':
		return "", errors.New(line[1:])
	case '$':
		n, err := strconv.Atoi(line[1:])
		if err != nil || n < 0 {
			return "", fmt.Errorf("reply %q", line)
		}
		b := make([]byte, n+2)
		if _, err := io.ReadFull(r, b); err != nil {
			return "", err
		}
		return string(b[:n]), nil
	}
	return "", fmt.Errorf("unexpected reply %q", line)
}

// encode writes a command as a RESP array of bulk strings.
func encode(args ...string) []byte {
	b := []byte("*" + strconv.Itoa(len(args)) + "\r\n")
	for _, a := range args {
		b = append(b, "$"+strconv.Itoa(len(a))+"\r\n"...)
		b = append(b, a...)
		b = append(b, "\r\n"...)
	}
	return b
}

// poll calls cond every 20 ms until it reports true, returns an error, or
// timeout passes.
func poll(timeout time.Duration, cond func() (bool, error)) error {
	deadline := time.Now().Add(timeout)
	for {
		ok, err := cond()
		if err != nil {
			return err
		}
		if ok {
			return nil
		}
		if time.Now().After(deadline) {
			return errors.New("timed out")
		}
		time.Sleep(20 * time.Millisecond) // polling an external process
	}
}
