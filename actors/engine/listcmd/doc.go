// Package listcmd owns the list commands (LPUSH, LRANGE, LPOS, LMOVE, and
// the blocking BLPOP, BLMOVE, BLMPOP ...) over types/list, run inside the
// shard that owns the keys.
package listcmd
