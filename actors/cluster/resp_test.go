package cluster_test

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// val is a parsed RESP2/RESP3 reply that keeps the wire type, so tests can
// assert reply shapes (bulk vs verbatim, array vs map, int vs string).
type val struct {
	T     byte // '+', '-', ':', '$', '*', '%', '=', '_', ...
	S     string
	N     int64
	Elems []val
	Null  bool
}

func (v val) String() string {
	switch v.T {
	case '*', '%', '~', '>':
		parts := make([]string, len(v.Elems))
		for i, e := range v.Elems {
			parts[i] = e.String()
		}
		return string(v.T) + "[" + strings.Join(parts, " ") + "]"
	case ':':
		if v.S != "" {
			return ":" + v.S
		}
		return ":" + strconv.FormatInt(v.N, 10)
	}
	if v.Null {
		return string(v.T) + "null"
	}
	return string(v.T) + strconv.Quote(v.S)
}

// rawConn speaks RESP directly, one command at a time.
type rawConn struct {
	t *testing.T
	c net.Conn
	r *bufio.Reader
}

func dialRaw(t *testing.T, addr string) *rawConn {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	return &rawConn{t: t, c: c, r: bufio.NewReader(c)}
}

func (rc *rawConn) do(args ...string) val {
	rc.t.Helper()
	var b strings.Builder
	fmt.Fprintf(&b, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(a), a)
	}
	require.NoError(rc.t, rc.c.SetDeadline(time.Now().Add(10*time.Second)))
	_, err := rc.c.Write([]byte(b.String()))
	require.NoError(rc.t, err)
	v, err := readVal(rc.r)
	require.NoError(rc.t, err)
	return v
}

func readVal(r *bufio.Reader) (val, error) {
	line, err := r.ReadString('\n')
	if err != nil {
		return val{}, err
	}
	if len(line) < 3 || !strings.HasSuffix(line, "\r\n") {
		return val{}, fmt.Errorf("bad line %q", line)
	}
	t, body := line[0], line[1:len(line)-2]
	v := val{T: t}
	switch t {
	case '+', '-', ',', '#', '(':
		v.S = body
	case ':':
		v.N, err = strconv.ParseInt(body, 10, 64)
	case '_':
		v.Null = true
	case '$', '=', '!':
		n, _ := strconv.Atoi(body)
		if n < 0 {
			v.Null = true
			return v, nil
		}
		buf := make([]byte, n+2)
		if _, err := io.ReadFull(r, buf); err != nil {
			return v, err
		}
		v.S = string(buf[:n])
	case '*', '~', '>', '%':
		n, _ := strconv.Atoi(body)
		if n < 0 {
			v.Null = true
			return v, nil
		}
		if t == '%' {
			n *= 2
		}
		v.Elems = make([]val, 0, n)
		for i := 0; i < n; i++ {
			e, err := readVal(r)
			if err != nil {
				return v, err
			}
			v.Elems = append(v.Elems, e)
		}
	default:
		return v, fmt.Errorf("unknown type %q", t)
	}
	return v, err
}

// normalize replaces node-specific text (ids, ports) with placeholders so
// replies from two servers can be compared.
func normalize(v val, repl *strings.Replacer) val {
	v.S = repl.Replace(v.S)
	if v.T == ':' {
		if n := strconv.FormatInt(v.N, 10); repl.Replace(n) != n {
			v.S = repl.Replace(n)
		}
	}
	for i := range v.Elems {
		v.Elems[i] = normalize(v.Elems[i], repl)
	}
	return v
}
