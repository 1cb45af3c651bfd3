package node

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"

	"github.com/slotd/slotd/netio"
)

// redisLog renders zerolog events in Redis's log line format, which
// operators' log tooling parses:
//
//	<pid>:<role> <dd Mon yyyy HH:MM:SS.mmm> <level> <message> [key=value ...]
//
// role is M (primary) or S (replica); level is . (debug), - (verbose),
// * (notice) or # (warning and above). The time is taken when the line is
// written (zerolog writes each event synchronously, in one Write).
type redisLog struct {
	out     io.Writer
	pid     int
	replica atomic.Pointer[func() bool]
	mu      sync.Mutex // one line at a time
	buf     []byte
}

func newRedisLog(out io.Writer) *redisLog { return &redisLog{out: out, pid: os.Getpid()} }

// setRole makes replica decide the role character (it must not block).
func (r *redisLog) setRole(replica func() bool) { r.replica.Store(&replica) }

func (r *redisLog) roleChar() byte {
	if f := r.replica.Load(); f != nil && (*f)() {
		return 'S'
	}
	return 'M'
}

// Write prefixes one formatted event with the pid, role and time.
func (r *redisLog) Write(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.buf = fmt.Appendf(r.buf[:0], "%d:%c ", r.pid, r.roleChar())
	r.buf = time.Now().AppendFormat(r.buf, "02 Jan 2006 15:04:05.000")
	r.buf = append(r.buf, ' ')
	r.buf = append(r.buf, p...)
	_, err := r.out.Write(r.buf)
	return len(p), err
}

// raw writes text as it is (the start-up banner), one line at a time.
func (r *redisLog) raw(text string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	_, _ = io.WriteString(r.out, text)
}

// levelChar is Redis's level character of a zerolog level.
func levelChar(l zerolog.Level) string {
	switch {
	case l <= zerolog.TraceLevel:
		return "."
	case l == zerolog.DebugLevel:
		return "-"
	case l == zerolog.InfoLevel:
		return "*"
	}
	return "#"
}

// newRedisLogger builds the node's logger over w.
func newRedisLogger(w *redisLog) zerolog.Logger {
	cw := zerolog.ConsoleWriter{Out: w, NoColor: true,
		PartsOrder: []string{zerolog.LevelFieldName, zerolog.MessageFieldName},
		FormatLevel: func(i any) string {
			s, _ := i.(string)
			l, err := zerolog.ParseLevel(s)
			if err != nil {
				return "#"
			}
			return levelChar(l)
		}}
	return zerolog.New(cw)
}

// levelOf maps the loglevel directive to zerolog's levels: debug is
// Trace, verbose Debug, notice Info, warning Warn.
func levelOf(s string) zerolog.Level {
	switch strings.ToLower(s) {
	case "debug":
		return zerolog.TraceLevel
	case "verbose":
		return zerolog.DebugLevel
	case "warning":
		return zerolog.WarnLevel
	case "nothing":
		return zerolog.Disabled
	default:
		return zerolog.InfoLevel
	}
}

// banner is what a node prints when it starts: with always-show-logo (or a
// terminal on stdout and no logfile) a block of text naming the mode, port
// and PID, as redis-server shows its logo; else one "Running mode" line.
func (n *Node) banner() {
	mode := "standalone"
	if n.Cfg.Bool("cluster-enabled") {
		mode = "cluster"
	}
	port := n.Cfg.Int("port")
	if !n.Cfg.Bool("always-show-logo") && !(n.Cfg.String("logfile") == "" && isTerminal(os.Stdout)) {
		n.Log.Info().Msgf("Running mode=%s, port=%d.", mode, port)
		return
	}
	n.logw.raw(fmt.Sprintf("\n"+
		"    slotd %s (Redis protocol), 64 bit\n"+
		"    Running in %s mode\n"+
		"    Port: %d\n"+
		"    PID: %d\n\n", netio.RedisVersion, mode, port, os.Getpid()))
}

func isTerminal(f *os.File) bool {
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
