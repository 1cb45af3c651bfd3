package slots

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCRC16(t *testing.T) {
	assert.Equal(t, uint16(0x31C3), CRC16([]byte("123456789")))
	assert.Equal(t, uint16(0), CRC16(nil))
	assert.Equal(t, uint16(0), CRC16([]byte{}))
}

// crc16Bitwise is an independent bit-at-a-time CRC16-XMODEM used to check the
// table-driven implementation.
func crc16Bitwise(b []byte) uint16 {
	var crc uint16
	for _, c := range b {
		crc ^= uint16(c) << 8
		for range 8 {
			if crc&0x8000 != 0 {
				crc = crc<<1 ^ 0x1021
			} else {
				crc <<= 1
			}
		}
	}
	return crc
}

func TestCRC16MatchesBitwise(t *testing.T) {
	buf := make([]byte, 0, 300)
	for i := range 300 {
		assert.Equal(t, crc16Bitwise(buf), CRC16(buf), "len %d", len(buf))
		buf = append(buf, byte(i*131+7))
	}
	for c := range 256 {
		b := []byte{byte(c)}
		assert.Equal(t, crc16Bitwise(b), CRC16(b), "byte %#x", c)
	}
}

func TestCRC16SubRanges(t *testing.T) {
	buf := make([]byte, 40)
	for i := range buf {
		buf[i] = byte(i*197 + 31)
	}
	str := string(buf)
	for lo := 0; lo <= len(buf); lo++ {
		for hi := lo; hi <= len(buf); hi++ {
			want := crc16Bitwise(buf[lo:hi])
			require.Equal(t, want, crc16Of(buf, lo, hi), "[]byte [%d:%d]", lo, hi)
			require.Equal(t, want, crc16Of(str, lo, hi), "string [%d:%d]", lo, hi)
		}
	}
}

func TestHashSlot(t *testing.T) {
	// Expected values checked with CLUSTER KEYSLOT on redis-server 7.0.15.
	cases := []struct {
		key  string
		slot int
	}{
		{"", 0},
		{"123456789", 12739}, // 0x31C3 & 16383
		{"foo", 12182},
		{"bar", 5061},
		{"{bar", 4015},
		{"user:1", 10778},
		{"{user:1}:cart", 10778},
		{"user:2", 6777},
		{"{user1000}.following", 3443},
		{"{user1000}.followers", 3443},
		{"foo{}{bar}", 8363},
		{"foo{{bar}}zap", 4015}, // hashes "{bar"
		{"foo{bar}{zap}", 5061}, // hashes "bar"
		{"foo{bar}zap", 5061},
		{"{}x", 10595},
	}
	for _, c := range cases {
		assert.Equal(t, c.slot, HashSlot([]byte(c.key)), "HashSlot(%q)", c.key)
		assert.Equal(t, c.slot, HashSlotString(c.key), "HashSlotString(%q)", c.key)
	}
}

func TestHashSlotTagRules(t *testing.T) {
	whole := func(k string) int { return int(CRC16([]byte(k)) & 16383) }
	tag := func(s string) int { return int(CRC16([]byte(s)) & 16383) }

	assert.Equal(t, HashSlotString("{user1000}.following"), HashSlotString("{user1000}.followers"))
	assert.Equal(t, whole("foo{}{bar}"), HashSlotString("foo{}{bar}"))
	assert.Equal(t, tag("{bar"), HashSlotString("foo{{bar}}zap"))
	assert.Equal(t, tag("bar"), HashSlotString("foo{bar}{zap}"))
	assert.Equal(t, whole("foo{bar"), HashSlotString("foo{bar"))
	assert.Equal(t, whole("foo}bar{"), HashSlotString("foo}bar{"))
	assert.Equal(t, whole("{}"), HashSlotString("{}"))
	assert.Equal(t, whole("{"), HashSlotString("{"))
	// The first '}' after the first '{' closes an empty tag: the later '}'
	// does not make "}" the tag.
	assert.Equal(t, whole("a{}}"), HashSlotString("a{}}"))
	assert.NotEqual(t, tag("}"), HashSlotString("a{}}"))
	assert.Equal(t, tag("x"), HashSlotString("{x}"))
	assert.Equal(t, tag("\x00\xff"), HashSlot([]byte("\xfe{\x00\xff}\x01")))
}

func TestHashSlotRange(t *testing.T) {
	for i := range 100000 {
		k := []byte{byte(i), byte(i >> 8), byte(i >> 16)}
		s := HashSlot(k)
		require.True(t, s >= 0 && s < NumSlots)
		require.Equal(t, s, HashSlotString(string(k)))
	}
}

func TestHashSlotNoAllocs(t *testing.T) {
	key := []byte("prefix:{user1000}:suffix")
	skey := "prefix:{user1000}:suffix"
	var sink int
	assert.Zero(t, testing.AllocsPerRun(1000, func() { sink += HashSlot(key) }))
	assert.Zero(t, testing.AllocsPerRun(1000, func() { sink += HashSlotString(skey) }))
	_ = sink
}

var benchSink int

func BenchmarkHashSlot(b *testing.B) {
	for _, bc := range []struct{ name, key string }{
		{"short", "user:1000"},
		{"tagged", "{user1000}.followers"},
		{"long", "session:0123456789abcdef0123456789abcdef0123456789abcdef"},
	} {
		key := []byte(bc.key)
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(key)))
			for b.Loop() {
				benchSink += HashSlot(key)
			}
		})
	}
}

func BenchmarkHashSlotString(b *testing.B) {
	key := "{user1000}.followers"
	b.ReportAllocs()
	for b.Loop() {
		benchSink += HashSlotString(key)
	}
}
