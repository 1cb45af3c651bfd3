package difftest

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/slotd/slotd/netio/resp"
)

// Cmd is one command as its argument vector.
type Cmd []string

// Name is the command name in upper case.
func (c Cmd) Name() string {
	if len(c) == 0 {
		return ""
	}
	return strings.ToUpper(c[0])
}

// Reply is one parsed RESP2/RESP3 reply. Raw keeps its exact wire bytes, so
// "exact" comparisons see reply types (bulk vs simple, $-1 vs _) as a client
// does.
type Reply struct {
	Kind  byte     // the type byte: + - : $ * % ~ _ , # ( = | >
	Str   string   // line payload, or bulk / verbatim payload
	Nil   bool     // $-1 or *-1
	Elems []*Reply // aggregates; maps and attributes flat (2n)
	Raw   string
}

// IsErr reports whether r is an error reply.
func (r *Reply) IsErr() bool { return r != nil && (r.Kind == '-' || r.Kind == '!') }

// IsAgg reports whether r is a (non-null) aggregate.
func (r *Reply) IsAgg() bool {
	if r == nil || r.Nil {
		return false
	}
	switch r.Kind {
	case '*', '%', '~', '|', '>':
		return true
	}
	return false
}

// String renders the exact wire bytes as a Go-quoted string.
func (r *Reply) String() string {
	if r == nil {
		return "<no reply>"
	}
	return strconv.Quote(r.Raw)
}

// readReply reads one complete reply.
func readReply(r *bufio.Reader) (*Reply, error) {
	line, err := r.ReadString('\n')
	if err != nil {
		return nil, err
	}
	if len(line) < 3 || line[len(line)-2] != '\r' {
		return nil, fmt.Errorf("bad reply line %q", line)
	}
	rep := &Reply{Kind: line[0], Str: line[1 : len(line)-2], Raw: line}
	switch rep.Kind {
	case '$', '=', '!':
		n, err := strconv.Atoi(rep.Str)
		if err != nil {
			return nil, fmt.Errorf("bad length in %q", line)
		}
		if n < 0 {
			rep.Nil, rep.Str = true, ""
			return rep, nil
		}
		buf := make([]byte, n+2)
		if _, err := io.ReadFull(r, buf); err != nil {
			return nil, err
		}
		rep.Str = string(buf[:n])
		rep.Raw += string(buf)
	case '*', '%', '~', '|', '>':
		n, err := strconv.Atoi(rep.Str)
		if err != nil {
			return nil, fmt.Errorf("bad length in %q", line)
		}
		rep.Str = ""
		if n < 0 {
			rep.Nil = true
			return rep, nil
		}
		if rep.Kind == '%' || rep.Kind == '|' {
			n *= 2
		}
		var raw strings.Builder
		raw.WriteString(line)
		rep.Elems = make([]*Reply, n)
		for i := range rep.Elems {
			el, err := readReply(r)
			if err != nil {
				return nil, err
			}
			rep.Elems[i] = el
			raw.WriteString(el.Raw)
		}
		rep.Raw = raw.String()
	case '+', '-', ':', '_', ',', '#', '(':
	default:
		return nil, fmt.Errorf("unknown reply type in %q", line)
	}
	return rep, nil
}

// conn is a raw RESP connection that pipelines commands.
type conn struct {
	c   net.Conn
	r   *bufio.Reader
	buf []byte
}

// ioTimeout bounds every exchange: nothing the generator sends can block
// for long (blocking commands time out after 10 ms), so hitting it means a
// server hung.
const ioTimeout = 30 * time.Second

// dial connects to addr and switches to RESP3 when proto is 3.
func dial(addr string, proto int) (*conn, error) {
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return nil, err
	}
	cn := &conn{c: c, r: bufio.NewReaderSize(c, 64<<10)}
	if proto == 3 {
		rs, err := cn.do([]Cmd{{"HELLO", "3"}})
		if err != nil {
			_ = c.Close()
			return nil, err
		}
		if rs[0].Kind != '%' {
			_ = c.Close()
			return nil, fmt.Errorf("HELLO 3 to %s: %s", addr, rs[0])
		}
	}
	return cn, nil
}

func (cn *conn) close() { _ = cn.c.Close() }

// do sends cmds in one write and reads one reply per command.
func (cn *conn) do(cmds []Cmd) ([]*Reply, error) {
	if err := cn.c.SetDeadline(time.Now().Add(ioTimeout)); err != nil {
		return nil, err
	}
	cn.buf = cn.buf[:0]
	for _, c := range cmds {
		cn.buf = resp.AppendCommand(cn.buf, c...)
	}
	if _, err := cn.c.Write(cn.buf); err != nil {
		return nil, err
	}
	out := make([]*Reply, len(cmds))
	for i := range out {
		r, err := readReply(cn.r)
		if err != nil {
			return nil, fmt.Errorf("reading reply %d (%q): %w", i, cmds[i], err)
		}
		out[i] = r
	}
	return out, nil
}
