package node

import (
	"bytes"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Redis's log line: <pid>:<role> <dd Mon yyyy HH:MM:SS.mmm> <level> <message>.
var redisLine = regexp.MustCompile(`^(\d+):([MS]) (\d\d [A-Z][a-z]{2} \d{4} \d\d:\d\d:\d\d\.\d{3}) ([.\-*#]) (.*)$`)

func TestLogLinesInRedisFormat(t *testing.T) {
	var out bytes.Buffer
	w := newRedisLog(&out)
	replica := false
	w.setRole(func() bool { return replica })
	log := newRedisLogger(w).Level(levelOf("debug"))
	log.Trace().Msg("a debug line")
	log.Debug().Msg("a verbose line")
	log.Info().Str("master", "127.0.0.1:7000").Msg("Connecting to MASTER")
	replica = true
	log.Warn().Msg("a warning")
	log.Error().Msg("an error")

	lines := strings.Split(strings.TrimRight(out.String(), "\n"), "\n")
	require.Len(t, lines, 5)
	wantLevel := []string{".", "-", "*", "#", "#"}
	wantRole := []string{"M", "M", "M", "S", "S"}
	var stamps []time.Time
	for i, l := range lines {
		m := redisLine.FindStringSubmatch(l)
		require.NotNil(t, m, "line %q", l)
		assert.Equal(t, strconv.Itoa(os.Getpid()), m[1])
		assert.Equal(t, wantRole[i], m[2], l)
		assert.Equal(t, wantLevel[i], m[4], l)
		ts, err := time.ParseInLocation("02 Jan 2006 15:04:05.000", m[3], time.Local)
		require.NoError(t, err)
		stamps = append(stamps, ts)
	}
	assert.Equal(t, "Connecting to MASTER master=127.0.0.1:7000", redisLine.FindStringSubmatch(lines[2])[5])
	// Real milliseconds: the stamp is within a second of now, not truncated
	// to whole seconds.
	assert.WithinDuration(t, time.Now(), stamps[4], time.Second)
}

func TestLogLevelsFollowLoglevel(t *testing.T) {
	for _, c := range []struct {
		directive string
		want      zerolog.Level
	}{{"debug", zerolog.TraceLevel}, {"verbose", zerolog.DebugLevel}, {"notice", zerolog.InfoLevel},
		{"warning", zerolog.WarnLevel}, {"nothing", zerolog.Disabled}} {
		assert.Equal(t, c.want, levelOf(c.directive), c.directive)
	}
}
