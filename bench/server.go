package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
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

type server struct {
	name string
	port int
	// metricsPort replaced {metricsport} in the command (0: none).
	metricsPort int
	argv        []string
	cmd         *exec.Cmd
	log         string
	done        chan struct{} // closed when the process has exited
}

// readyTimeout is how long a server may take to answer PING after it starts
// (longer under callgrind).
var readyTimeout = 15 * time.Second

// startServer starts the command line tmpl ({port} replaced by a free port)
// and waits until it answers PING.
func startServer(ctx context.Context, name, tmpl, dir string, pin bool) (*server, error) {
	port, err := benchkit.FreePort()
	if err != nil {
		return nil, err
	}
	mport := 0
	if strings.Contains(tmpl, "{metricsport}") {
		if mport, err = benchkit.FreePort(); err != nil {
			return nil, err
		}
		tmpl = strings.ReplaceAll(tmpl, "{metricsport}", strconv.Itoa(mport))
	}
	argv, err := splitCommand(strings.ReplaceAll(tmpl, "{port}", strconv.Itoa(port)))
	if err != nil {
		return nil, fmt.Errorf("%s command: %w", name, err)
	}
	if len(argv) == 0 {
		return nil, fmt.Errorf("%s command is empty", name)
	}
	if pin {
		argv = append([]string{"taskset", "-c", "0"}, argv...) // taskset execs, so the pid stays the server's
	}
	s := &server{name: name, port: port, metricsPort: mport, argv: argv, log: filepath.Join(dir, name+".log"), done: make(chan struct{})}
	logf, err := os.Create(s.log)
	if err != nil {
		return nil, err
	}
	defer logf.Close()
	s.cmd = exec.Command(argv[0], argv[1:]...)
	s.cmd.Stdout, s.cmd.Stderr = logf, logf
	// Own process group so stop() also reaches anything the command spawns;
	// Pdeathsig kills the server if the driver itself dies uncleanly.
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := s.cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", name, err)
	}
	go func() { s.cmd.Wait(); close(s.done) }()
	if err := s.waitReady(ctx, readyTimeout); err != nil {
		s.stop()
		return nil, fmt.Errorf("%s did not come up: %w\n--- %s ---\n%s", name, err, s.log, tail(s.log))
	}
	return s, nil
}

func (s *server) pid() int { return s.cmd.Process.Pid }

// waitReady polls PING until +PONG, the process exits, or the deadline passes.
func (s *server) waitReady(ctx context.Context, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	for {
		err := ping(s.port)
		if err == nil {
			return nil
		}
		select {
		case <-s.done:
			return fmt.Errorf("process exited (%v)", s.cmd.ProcessState)
		case <-ctx.Done():
			return fmt.Errorf("%w (last error: %v)", ctx.Err(), err)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// stop sends SIGTERM to the server's process group, then SIGKILL if it has
// not exited within 5 seconds.
func (s *server) stop() {
	pgid := -s.cmd.Process.Pid
	syscall.Kill(pgid, syscall.SIGTERM)
	select {
	case <-s.done:
	case <-time.After(5 * time.Second):
		syscall.Kill(pgid, syscall.SIGKILL)
		<-s.done
	}
}

// cpuTime returns the server's user+system CPU time so far (all threads).
func (s *server) cpuTime() (time.Duration, error) { return benchkit.ProcCPU(s.pid()) }

func ping(port int) error {
	line, err := request(port, "*1\r\n$4\r\nPING\r\n", time.Second)
	if err != nil {
		return err
	}
	if line != "+PONG" {
		return fmt.Errorf("PING replied %q", line)
	}
	return nil
}

// request sends one raw RESP request to 127.0.0.1:port and returns the
// first line of the reply, trimmed; timeout bounds the dial and the
// exchange each.
func request(port int, req string, timeout time.Duration) (string, error) {
	c, err := net.DialTimeout("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), timeout)
	if err != nil {
		return "", err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(timeout))
	if _, err := c.Write([]byte(req)); err != nil {
		return "", err
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		return "", fmt.Errorf("%w: %v", errNoReply, err)
	}
	return strings.TrimSpace(line), nil
}

// errNoReply: the request went out but no reply line came back.
var errNoReply = errors.New("no reply")

// tail returns the last lines of a log file.
func tail(path string) string { return benchkit.Tail(path, 20) }

// splitCommand splits a command line into words the way a POSIX shell would
// for the simple cases used here: whitespace separates words, single quotes
// are literal, double quotes allow \" and \\, and an empty pair of
// quotes yields an empty word.
// No expansion or redirection is performed.
func splitCommand(s string) ([]string, error) {
	var words []string
	var cur strings.Builder
	inWord := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		case c == '\'':
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				return nil, errors.New("unterminated '")
			}
			cur.WriteString(s[i+1 : i+1+j])
			i += j + 1
			inWord = true
		case c == '"':
			i++
			for ; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' && i+1 < len(s) && (s[i+1] == '"' || s[i+1] == '\\') {
					i++
				}
				cur.WriteByte(s[i])
			}
			if i >= len(s) {
				return nil, errors.New(`unterminated "`)
			}
			inWord = true
		case c == '\\' && i+1 < len(s):
			i++
			cur.WriteByte(s[i])
			inWord = true
		default:
			cur.WriteByte(c)
			inWord = true
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words, nil
}

// shellQuote quotes s for splitCommand.
func shellQuote(s string) string {
	if s != "" && !strings.ContainsAny(s, " \t\n'\"\\") {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// quoteArgs renders argv as a command line that splitCommand reads back.
func quoteArgs(argv []string) string {
	q := make([]string, len(argv))
	for i, a := range argv {
		q[i] = shellQuote(a)
	}
	return strings.Join(q, " ")
}
