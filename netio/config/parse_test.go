package config

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestSplitArgs(t *testing.T) {
	cases := []struct {
		in   string
		want []string
		ok   bool
	}{
		{"", []string{}, true},
		{"   \t ", []string{}, true},
		{"port 6379", []string{"port", "6379"}, true},
		{"  save   900 1  ", []string{"save", "900", "1"}, true},
		{`requirepass "a b"`, []string{"requirepass", "a b"}, true},
		{`requirepass 'a b'`, []string{"requirepass", "a b"}, true},
		{`x ""`, []string{"x", ""}, true},
		{`x ''`, []string{"x", ""}, true},
		{`x "a\nb\tc\r\\\"q\x41\x7a"`, []string{"x", "a\nb\tc\r\\\"qAz"}, true},
		{`x "\q\a\b"`, []string{"x", "q\a\b"}, true},
		{`x "\x4"`, []string{"x", "x4"}, true}, // not two hex digits: \x is just x
		{`x 'it\'s' 'a\nb'`, []string{"x", "it's", `a\nb`}, true},
		{`x ab"c d"`, []string{"x", "abc d"}, true},
		{`x "abc`, nil, false},
		{`x 'abc`, nil, false},
		{`x "abc"def`, nil, false},
		{`x 'abc'def`, nil, false},
		{`x "a" "b"`, []string{"x", "a", "b"}, true},
	}
	for _, tc := range cases {
		got, ok := SplitArgs(tc.in)
		assert.Equal(t, tc.ok, ok, tc.in)
		if tc.ok {
			assert.Equal(t, tc.want, got, tc.in)
		}
	}
}

func TestParseMemory(t *testing.T) {
	cases := []struct {
		in   string
		want int64
		ok   bool
	}{
		{"0", 0, true},
		{"100", 100, true},
		{"100b", 100, true},
		{"1k", 1000, true},
		{"1K", 1000, true},
		{"1kb", 1024, true},
		{"1KB", 1024, true},
		{"1kB", 1024, true},
		{"1m", 1000 * 1000, true},
		{"1mb", 1024 * 1024, true},
		{"2Mb", 2 * 1024 * 1024, true},
		{"1g", 1000 * 1000 * 1000, true},
		{"1gb", 1024 * 1024 * 1024, true},
		{"1Gb", 1024 * 1024 * 1024, true},
		{"-1", 0, false},
		{"", 0, false},
		{"kb", 0, false},
		{"1.5gb", 0, false},
		{"1tb", 0, false},
		{"1 kb", 0, false},
		{"9223372036854775807", math.MaxInt64, true},
		{"9223372036854775808", 0, false},
		{"99999999999gb", 0, false},
	}
	for _, tc := range cases {
		got, ok := ParseMemory(tc.in)
		assert.Equal(t, tc.ok, ok, tc.in)
		assert.Equal(t, tc.want, got, tc.in)
	}
}

func TestParseStrictInt(t *testing.T) {
	good := map[string]int64{"0": 0, "1": 1, "-1": -1, "6379": 6379,
		"9223372036854775807": math.MaxInt64, "-9223372036854775808": math.MinInt64}
	for in, want := range good {
		got, ok := parseStrictInt(in)
		assert.True(t, ok, in)
		assert.Equal(t, want, got, in)
	}
	for _, in := range []string{"", "-", "-0", "01", "+1", " 1", "1 ", "1a", "abc", "1.0",
		"9223372036854775808", "-9223372036854775809", "99999999999999999999"} {
		_, ok := parseStrictInt(in)
		assert.False(t, ok, in)
	}
}

func TestMatch(t *testing.T) {
	yes := [][2]string{
		{"*", "port"}, {"port", "port"}, {"PORT", "port"}, {"p*", "port"}, {"*ort", "port"},
		{"p?rt", "port"}, {"[pq]ort", "port"}, {"[a-z]ort", "port"}, {"[^a-o]ort", "port"},
		{"*max*entries", "hash-max-listpack-entries"}, {"p\\ort", "port"}, {"*-*-*", "a-b-c"},
		{"[z-a]ort", "port"}, {"**t", "port"}, {"[P]ORT", "port"},
	}
	no := [][2]string{
		{"p", "port"}, {"p?t", "port"}, {"[^p]ort", "port"}, {"x*", "port"}, {"port?", "port"},
		{"*max", "maxmemory"},
	}
	for _, c := range yes {
		assert.True(t, Match(c[0], c[1]), "%q ~ %q", c[0], c[1])
	}
	for _, c := range no {
		assert.False(t, Match(c[0], c[1]), "%q !~ %q", c[0], c[1])
	}
}
