package shard_test

import (
	"strconv"
	"testing"

	"github.com/slotd/slotd/actors/node/nodetest"
)

// scrRedis starts a real redis-server for side-by-side comparisons; the
// test is skipped when none is installed.
func scrRedis(t *testing.T, directives ...string) string {
	return nodetest.StartRedis(t, directives...)
}

func scrBulk(s string) string { return "$" + strconv.Itoa(len(s)) + "\r\n" + s + "\r\n" }
func scrErr(s string) string  { return "-" + s + "\r\n" }
