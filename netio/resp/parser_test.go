package resp

import (
	"bytes"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func parseAll(t *testing.T, in string) ([][]string, error) {
	t.Helper()
	var p Parser
	var out [][]string
	buf := []byte(in)
	for len(buf) > 0 {
		args, n, err := p.Parse(buf)
		if err != nil {
			return out, err
		}
		if n == 0 {
			break
		}
		buf = buf[n:]
		if len(args) == 0 {
			continue
		}
		var cmd []string
		for _, a := range args {
			cmd = append(cmd, string(a))
		}
		out = append(out, cmd)
	}
	return out, nil
}

func TestParseMultibulkAndInline(t *testing.T) {
	cmds, err := parseAll(t, "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$0\r\n\r\nPING\r\n  get   \"a b\"  'c\\'d'\n\r\n*0\r\n*-1\r\nECHO \"\\x41\\n\"\r\n")
	require.NoError(t, err)
	require.Equal(t, [][]string{{"SET", "k", ""}, {"PING"}, {"get", "a b", "c'd"}, {"ECHO", "A\n"}}, cmds)
}

func TestParseIncrementalByteByByte(t *testing.T) {
	in := []byte("*2\r\n$3\r\nGET\r\n$10\r\n0123456789\r\n")
	var p Parser
	for i := 1; i < len(in); i++ {
		_, n, err := p.Parse(in[:i])
		require.NoError(t, err)
		require.Zero(t, n, "complete at %d", i)
	}
	args, n, err := p.Parse(in)
	require.NoError(t, err)
	require.Equal(t, len(in), n)
	require.Equal(t, "0123456789", string(args[1]))
}

// Redis's wording for framing errors (tests/unit/protocol.tcl behaviour).
func TestParseProtocolErrors(t *testing.T) {
	cases := map[string]string{
		"*20000000\r\n":                          "Protocol error: invalid multibulk length",
		"*abc\r\n":                               "Protocol error: invalid multibulk length",
		"*3\r\n$3\r\nSET\r\n$1\r\nx\r\nfooz\r\n": "Protocol error: expected '$', got 'f'",
		"*1\r\n$-10\r\n":                         "Protocol error: invalid bulk length",
		"*1\r\n$600000000\r\n":                   "Protocol error: invalid bulk length",
		"\"unbalanced\r\n":                       "Protocol error: unbalanced quotes in request",
		"\"a\"b\r\n":                             "Protocol error: unbalanced quotes in request",
	}
	for in, want := range cases {
		_, err := parseAll(t, in)
		require.Error(t, err, in)
		require.Equal(t, want, err.Error(), in)
	}
	_, err := parseAll(t, strings.Repeat("a", MaxInlineSize+1))
	require.EqualError(t, err, "Protocol error: too big inline request")
	_, err = parseAll(t, "*1\r\n$"+strings.Repeat("1", MaxInlineSize+1))
	require.EqualError(t, err, "Protocol error: too big bulk count string")
}

func TestParseIntStrict(t *testing.T) {
	for in, ok := range map[string]bool{"0": true, "-1": true, "9223372036854775807": true,
		"-9223372036854775808": true, "9223372036854775808": false, "01": false, "+1": false, " 1": false,
		"": false, "-": false, "1a": false, "-0": false} {
		_, got := ParseInt([]byte(in))
		require.Equal(t, ok, got, in)
	}
	// Every one- and two-byte input (the short path): valid exactly when
	// it is a canonical decimal, with that value.
	for a := range 256 {
		for b := -1; b < 256; b++ {
			in := []byte{byte(a)}
			if b >= 0 {
				in = append(in, byte(b))
			}
			v, ok := ParseInt(in)
			want, err := strconv.ParseInt(string(in), 10, 64)
			canonical := err == nil && strconv.FormatInt(want, 10) == string(in) && string(in) != "-0"
			require.Equal(t, canonical, ok, "%q", in)
			if ok {
				require.Equal(t, want, v, "%q", in)
			}
		}
	}
}

// FuzzParser checks the decoder never panics, never consumes more than it
// was given, and that a command re-encoded as multibulk parses back equal.
func FuzzParser(f *testing.F) {
	for _, s := range []string{"*1\r\n$4\r\nPING\r\n", "PING\r\n", "*2\r\n$3\r\nGET\r\n$1\r\nk\r\n",
		"set \"a\\x00b\" 'c'\n", "*-1\r\n", "*1\r\n$-1\r\n", "$3\r\nfoo\r\n", "*2\r\n$1\r\na\r\n*1\r\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		var p Parser
		buf := in
		for len(buf) > 0 {
			args, n, err := p.Parse(buf)
			if err != nil || n == 0 {
				return
			}
			if n > len(buf) {
				t.Fatalf("consumed %d of %d", n, len(buf))
			}
			buf = buf[n:]
			if len(args) == 0 {
				continue
			}
			var enc bytes.Buffer
			w := Writer{}
			w.Array(len(args))
			for _, a := range args {
				w.Bulk(a)
			}
			enc.Write(w.B)
			var q Parser
			back, m, err := q.Parse(enc.Bytes())
			if err != nil || m != enc.Len() || len(back) != len(args) {
				t.Fatalf("re-encoded command did not parse back: %v", err)
			}
			for i := range args {
				if !bytes.Equal(back[i], args[i]) {
					t.Fatalf("arg %d differs", i)
				}
			}
		}
	})
}
