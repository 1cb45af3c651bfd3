package shard_test

import (
	"strconv"
)

func scrBulk(s string) string { return "$" + strconv.Itoa(len(s)) + "\r\n" + s + "\r\n" }
func scrErr(s string) string  { return "-" + s + "\r\n" }
