package resp

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"time"
)

// Reply is one decoded RESP2/RESP3 reply, as a plain client sees it.
type Reply struct {
	// Type is the RESP type byte: '+', '-', ':', '$', '*', '_', ',', '#',
	// '%', '~', '>', '=' or '(' (a null bulk or array reads as '_').
	Type  byte
	Str   string  // simple, error, bulk and verbatim text; big numbers
	Int   int64   // integers and booleans (1/0)
	Elems []Reply // arrays, sets, pushes; maps as key, value, key, value...
}

// Err is the reply's error text as an error, or nil for any other type.
func (r Reply) Err() error {
	if r.Type == '-' {
		return errors.New(r.Str)
	}
	return nil
}

// ReadReply reads one reply from r. Nested aggregates are read whole.
func ReadReply(r *bufio.Reader) (Reply, error) {
	line, err := r.ReadSlice('\n')
	if err != nil {
		return Reply{}, err
	}
	if len(line) < 3 || line[len(line)-2] != '\r' {
		return Reply{}, &ProtocolError{Msg: "malformed reply line"}
	}
	t, body := line[0], string(line[1:len(line)-2])
	switch t {
	case '+', '-', ',', '(':
		return Reply{Type: t, Str: body}, nil
	case ':':
		n, err := strconv.ParseInt(body, 10, 64)
		if err != nil {
			return Reply{}, &ProtocolError{Msg: "bad integer reply"}
		}
		return Reply{Type: t, Int: n}, nil
	case '#':
		return Reply{Type: t, Int: boolInt(body == "t")}, nil
	case '_':
		return Reply{Type: '_'}, nil
	case '$', '=':
		n, err := strconv.Atoi(body)
		if err != nil {
			return Reply{}, &ProtocolError{Msg: "bad bulk length"}
		}
		if n < 0 {
			return Reply{Type: '_'}, nil
		}
		buf := make([]byte, n+2)
		if _, err := io.ReadFull(r, buf); err != nil {
			return Reply{}, err
		}
		return Reply{Type: t, Str: string(buf[:n])}, nil
	case '*', '~', '>', '%':
		n, err := strconv.Atoi(body)
		if err != nil {
			return Reply{}, &ProtocolError{Msg: "bad aggregate length"}
		}
		if n < 0 {
			return Reply{Type: '_'}, nil
		}
		if t == '%' {
			n *= 2
		}
		out := Reply{Type: t, Elems: make([]Reply, 0, n)}
		for i := 0; i < n; i++ {
			e, err := ReadReply(r)
			if err != nil {
				return Reply{}, err
			}
			out.Elems = append(out.Elems, e)
		}
		return out, nil
	}
	return Reply{}, &ProtocolError{Msg: fmt.Sprintf("unknown reply type %q", t)}
}

func boolInt(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// AppendCommand appends args as a RESP multibulk request.
func AppendCommand(dst []byte, args ...string) []byte {
	dst = append(dst, '*')
	dst = strconv.AppendInt(dst, int64(len(args)), 10)
	dst = append(dst, '\r', '\n')
	for _, a := range args {
		dst = append(dst, '$')
		dst = strconv.AppendInt(dst, int64(len(a)), 10)
		dst = append(dst, '\r', '\n')
		dst = append(dst, a...)
		dst = append(dst, '\r', '\n')
	}
	return dst
}

// Client is a minimal synchronous RESP2 client for tools (slotd demo,
// benches): one connection, one command at a time. It is not safe for
// concurrent use.
type Client struct {
	Addr    string
	Timeout time.Duration // per command; 0: 5 s

	conn net.Conn
	r    *bufio.Reader
	buf  []byte
}

// Do sends one command and reads its reply, dialling first when the client
// has no connection. A network error closes the connection (the next Do
// dials again); an error reply is returned as a Reply, not as an error.
func (c *Client) Do(args ...string) (Reply, error) {
	timeout := c.Timeout
	if timeout <= 0 {
		timeout = 5 * time.Second
	}
	if c.conn == nil {
		conn, err := net.DialTimeout("tcp", c.Addr, timeout)
		if err != nil {
			return Reply{}, err
		}
		c.conn, c.r = conn, bufio.NewReader(conn)
	}
	_ = c.conn.SetDeadline(time.Now().Add(timeout))
	c.buf = AppendCommand(c.buf[:0], args...)
	if _, err := c.conn.Write(c.buf); err != nil {
		c.Close()
		return Reply{}, err
	}
	rep, err := ReadReply(c.r)
	if err != nil {
		c.Close()
	}
	return rep, err
}

// Text runs a command whose reply is text (bulk, simple or verbatim) and
// returns it; an error reply becomes the error.
func (c *Client) Text(args ...string) (string, error) {
	rep, err := c.Do(args...)
	if err != nil {
		return "", err
	}
	if err := rep.Err(); err != nil {
		return "", err
	}
	return rep.Str, nil
}

// Close drops the connection.
func (c *Client) Close() {
	if c.conn != nil {
		_ = c.conn.Close()
		c.conn, c.r = nil, nil
	}
}
