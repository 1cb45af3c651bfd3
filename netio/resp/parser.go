package resp

import (
	"bytes"
)

// Limits mirror redis.conf defaults.
const (
	DefaultMaxBulkLen   = 512 << 20 // proto-max-bulk-len
	MaxMultibulkLen     = 1 << 20   // arguments per multibulk request
	MaxInlineSize       = 64 << 10  // PROTO_INLINE_MAX_SIZE
	UnauthMaxArgs       = 10        // arguments per request before AUTH
	UnauthMaxBulk       = 16384     // bytes per argument before AUTH
	maxPreallocatedArgs = 1024
)

// ProtocolError is a framing error: Redis replies with Msg and closes the
// connection.
type ProtocolError struct{ Msg string }

func (e *ProtocolError) Error() string { return e.Msg }

// Parser turns a query buffer into command argument vectors. It is resumable:
// when a multibulk request is incomplete it remembers how far it got, so a
// request trickling in over many reads is scanned once. The caller must hand
// it the same buffer prefix again (more bytes appended) until a command is
// returned or Reset is called.
//
// Returned argument slices point into the buffer (or, for inline requests
// with quotes, into the parser's scratch space) and are valid until the next
// call.
type Parser struct {
	MaxBulkLen int64 // 0 means DefaultMaxBulkLen
	// Unauth limits a request to UnauthMaxArgs arguments of at most
	// UnauthMaxBulk bytes each (a client that has not authenticated yet).
	Unauth bool

	args  [][]byte
	offs  []int // start,end pairs of completed bulk arguments
	argc  int   // expected argument count of the pending multibulk (0: none)
	pos   int   // where the pending multibulk resumes
	bulk  int   // pending bulk length, -1 when the next thing is a $ header
	inl   []byte
	inlAr [][]byte
}

// Reset forgets any partially parsed request.
func (p *Parser) Reset() {
	p.argc, p.pos, p.bulk = 0, 0, -1
	p.offs = p.offs[:0]
}

// Pending reports whether a partially received multibulk is being tracked.
func (p *Parser) Pending() bool { return p.argc > 0 }

// Parse reads one command from the start of buf. It returns the arguments and
// the number of bytes consumed. n == 0 with a nil error means buf holds no
// complete command yet. A request that parses to no arguments (an empty
// inline line, "*0" or "*-1") returns n > 0 and zero args: skip it.
func (p *Parser) Parse(buf []byte) (args [][]byte, n int, err error) {
	if len(buf) == 0 {
		return nil, 0, nil
	}
	if p.argc == 0 {
		if buf[0] != '*' {
			return p.parseInline(buf)
		}
		p.bulk = -1
		p.offs = p.offs[:0]
		nl := bytes.IndexByte(buf, '\n')
		if nl < 0 {
			if len(buf) > MaxInlineSize {
				return nil, 0, &ProtocolError{"Protocol error: too big mbulk count string"}
			}
			return nil, 0, nil
		}
		if nl < 2 || buf[nl-1] != '\r' {
			// Redis looks for "\r\n"; a bare "\n" leaves it waiting forever
			// for the count line, treat like an invalid length instead.
			return nil, 0, &ProtocolError{"Protocol error: invalid multibulk length"}
		}
		ll, ok := parseInt(buf[1 : nl-1])
		if !ok || ll > MaxMultibulkLen {
			return nil, 0, &ProtocolError{"Protocol error: invalid multibulk length"}
		}
		if ll > UnauthMaxArgs && p.Unauth {
			return nil, 0, &ProtocolError{"Protocol error: unauthenticated multibulk length"}
		}
		if ll <= 0 {
			return p.args[:0], nl + 1, nil
		}
		p.argc = int(ll)
		p.pos = nl + 1
	}
	maxBulk := p.MaxBulkLen
	if maxBulk <= 0 {
		maxBulk = DefaultMaxBulkLen
	}
	for len(p.offs)/2 < p.argc {
		if p.bulk < 0 {
			rest := buf[p.pos:]
			nl := bytes.IndexByte(rest, '\r')
			if nl < 0 || nl+1 >= len(rest) {
				if len(rest) > MaxInlineSize {
					p.Reset()
					return nil, 0, &ProtocolError{"Protocol error: too big bulk count string"}
				}
				return nil, 0, nil
			}
			if rest[0] != '$' {
				c := rest[0]
				p.Reset()
				return nil, 0, &ProtocolError{"Protocol error: expected '$', got '" + string([]byte{c}) + "'"}
			}
			ll, ok := parseInt(rest[1:nl])
			if !ok || ll < 0 || ll > maxBulk {
				p.Reset()
				return nil, 0, &ProtocolError{"Protocol error: invalid bulk length"}
			}
			if ll > UnauthMaxBulk && p.Unauth {
				p.Reset()
				return nil, 0, &ProtocolError{"Protocol error: unauthenticated bulk length"}
			}
			p.bulk = int(ll)
			p.pos += nl + 2
		}
		if len(buf)-p.pos < p.bulk+2 {
			return nil, 0, nil
		}
		p.offs = append(p.offs, p.pos, p.pos+p.bulk)
		p.pos += p.bulk + 2
		p.bulk = -1
	}
	args = p.args[:0]
	for i := 0; i < len(p.offs); i += 2 {
		args = append(args, buf[p.offs[i]:p.offs[i+1]:p.offs[i+1]])
	}
	if cap(args) <= maxPreallocatedArgs {
		p.args = args
	}
	n = p.pos
	p.argc, p.pos = 0, 0
	p.offs = p.offs[:0]
	return args, n, nil
}

func (p *Parser) parseInline(buf []byte) ([][]byte, int, error) {
	nl := bytes.IndexByte(buf, '\n')
	if nl < 0 {
		if len(buf) > MaxInlineSize {
			return nil, 0, &ProtocolError{"Protocol error: too big inline request"}
		}
		return nil, 0, nil
	}
	line := buf[:nl]
	if len(line) > 0 && line[len(line)-1] == '\r' {
		line = line[:len(line)-1]
	}
	args, ok := p.splitArgs(line)
	if !ok {
		return nil, 0, &ProtocolError{"Protocol error: unbalanced quotes in request"}
	}
	return args, nl + 1, nil
}

// splitArgs splits an inline request the way redis-cli users expect: blanks
// separate words, "double quotes" honour \n \r \t \b \a \\ \" and \xHH
// escapes, 'single quotes' only \', and a closing quote must be followed by
// a blank or the end.
func (p *Parser) splitArgs(line []byte) ([][]byte, bool) {
	p.inl = p.inl[:0]
	type span struct{ s, e int }
	var spans [16]span
	sp := spans[:0]
	i := 0
	for {
		for i < len(line) && isBlank(line[i]) {
			i++
		}
		if i >= len(line) {
			break
		}
		start := len(p.inl)
		inDq, inSq := false, false
		for done := false; !done; {
			if inDq {
				if i >= len(line) {
					return nil, false
				}
				c := line[i]
				if c == '\\' && i+3 < len(line) && line[i+1] == 'x' && isHex(line[i+2]) && isHex(line[i+3]) {
					p.inl = append(p.inl, unhex(line[i+2])<<4|unhex(line[i+3]))
					i += 4
					continue
				}
				if c == '\\' && i+1 < len(line) {
					i++
					switch line[i] {
					case 'n':
						c = '\n'
					case 'r':
						c = '\r'
					case 't':
						c = '\t'
					case 'b':
						c = '\b'
					case 'a':
						c = '\a'
					default:
						c = line[i]
					}
					p.inl = append(p.inl, c)
					i++
					continue
				}
				if c == '"' {
					if i+1 < len(line) && !isBlank(line[i+1]) {
						return nil, false
					}
					i++
					done = true
					continue
				}
				p.inl = append(p.inl, c)
				i++
			} else if inSq {
				if i >= len(line) {
					return nil, false
				}
				c := line[i]
				if c == '\\' && i+1 < len(line) && line[i+1] == '\'' {
					p.inl = append(p.inl, '\'')
					i += 2
					continue
				}
				if c == '\'' {
					if i+1 < len(line) && !isBlank(line[i+1]) {
						return nil, false
					}
					i++
					done = true
					continue
				}
				p.inl = append(p.inl, c)
				i++
			} else {
				if i >= len(line) {
					break
				}
				switch c := line[i]; c {
				case ' ', '\n', '\r', '\t', 0:
					done = true
				case '"':
					inDq = true
					i++
				case '\'':
					inSq = true
					i++
				default:
					p.inl = append(p.inl, c)
					i++
				}
			}
		}
		sp = append(sp, span{start, len(p.inl)})
	}
	args := p.inlAr[:0]
	for _, s := range sp {
		args = append(args, p.inl[s.s:s.e:s.e])
	}
	p.inlAr = args
	return args, true
}

func isBlank(c byte) bool { return c == ' ' || c == '\n' || c == '\r' || c == '\t' || c == 0 }
func isHex(c byte) bool {
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}
func unhex(c byte) byte {
	switch {
	case c >= '0' && c <= '9':
		return c - '0'
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10
	default:
		return c - 'A' + 10
	}
}

// parseInt parses a signed decimal as Redis's string2ll does: no spaces, no
// plus sign, no leading zeros (except "0"), fits in int64.
func parseInt(b []byte) (int64, bool) {
	return ParseInt(b)
}

// ParseInt is Redis's strict string→int64 conversion (string2ll).
func ParseInt(b []byte) (int64, bool) {
	// The lengths in a request are mostly one or two digits.
	switch len(b) {
	case 1:
		d := b[0] - '0'
		return int64(d), d <= 9
	case 2:
		d0, d1 := b[0]-'0', b[1]-'0'
		if d0-1 <= 8 && d1 <= 9 {
			return int64(d0)*10 + int64(d1), true
		}
	}
	if len(b) == 0 || len(b) > 20 {
		return 0, false
	}
	neg := false
	i := 0
	if b[0] == '-' {
		neg = true
		i = 1
		if len(b) == 1 {
			return 0, false
		}
	}
	if b[i] == '0' {
		return 0, len(b) == 1
	}
	var v uint64
	for ; i < len(b); i++ {
		c := b[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		d := uint64(c - '0')
		if v > (1<<64-1-d)/10 {
			return 0, false
		}
		v = v*10 + d
	}
	if neg {
		if v > 1<<63 {
			return 0, false
		}
		return -int64(v), true
	}
	if v > 1<<63-1 {
		return 0, false
	}
	return int64(v), true
}
