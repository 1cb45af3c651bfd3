package enginetest

import "strconv"

// Expected replies, as the bytes a client reads, for tests that compare
// them with what Do returns.

// Bulk is the bulk string reply s.
func Bulk(s string) string { return "$" + strconv.Itoa(len(s)) + "\r\n" + s + "\r\n" }

// Int is the integer reply n.
func Int(n int64) string { return ":" + strconv.FormatInt(n, 10) + "\r\n" }

// Err is the error reply msg.
func Err(msg string) string { return "-" + msg + "\r\n" }

// Null is the null reply of protocol proto (a RESP2 null bulk string).
func Null(proto int) string {
	if proto == 3 {
		return "_\r\n"
	}
	return "$-1\r\n"
}
