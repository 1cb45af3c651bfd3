package aof

import "errors"

var (
	errIncomplete = errors.New("unexpected end of file")
	errFormat     = errors.New("bad file format")
)

// parseCommand reads one command (a RESP array of bulk strings) from the
// start of b. It returns its arguments (pointing into b, appended to
// args) and its length. errIncomplete means b ends inside the command
// (a truncated tail); errFormat means the bytes are not a command.
func parseCommand(b []byte, args [][]byte) ([][]byte, int, error) {
	if len(b) == 0 {
		return args, 0, errIncomplete
	}
	if b[0] != '*' {
		return args, 0, errFormat
	}
	n, pos, err := parseLen(b, 1)
	if err != nil {
		return args, 0, err
	}
	if n < 1 {
		return args, 0, errFormat
	}
	for i := 0; i < n; i++ {
		if pos >= len(b) {
			return args, 0, errIncomplete
		}
		if b[pos] != '$' {
			return args, 0, errFormat
		}
		var l int
		if l, pos, err = parseLen(b, pos+1); err != nil {
			return args, 0, err
		}
		if l < 0 {
			return args, 0, errFormat
		}
		if len(b)-pos < l+2 {
			return args, 0, errIncomplete
		}
		if b[pos+l] != '\r' || b[pos+l+1] != '\n' {
			return args, 0, errFormat
		}
		args = append(args, b[pos:pos+l:pos+l])
		pos += l + 2
	}
	return args, pos, nil
}

// parseLen reads a decimal length ended by CRLF from b[pos:].
func parseLen(b []byte, pos int) (int, int, error) {
	n, digits := 0, 0
	for ; pos < len(b) && b[pos] != '\r'; pos++ {
		c := b[pos]
		if c < '0' || c > '9' || digits > 10 {
			return 0, 0, errFormat
		}
		n = n*10 + int(c-'0')
		digits++
	}
	if pos+1 >= len(b) {
		return 0, 0, errIncomplete
	}
	if digits == 0 || b[pos+1] != '\n' {
		return 0, 0, errFormat
	}
	return n, pos + 2, nil
}
