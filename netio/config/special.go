package config

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// SaveParam is one "save <seconds> <changes>" point.
type SaveParam struct {
	Seconds int64
	Changes int64
}

// ClientClass indexes ClientBufferLimits.
type ClientClass int

// Client classes of client-output-buffer-limit, in Redis's order.
const (
	ClassNormal ClientClass = iota
	ClassReplica
	ClassPubSub
)

var classNames = [...]string{"normal", "slave", "pubsub"}

// String is the class name as CONFIG GET prints it.
func (c ClientClass) String() string { return classNames[c] }

// BufferLimit is one client class's output buffer limit: disconnect at Hard
// bytes, or when Soft bytes are exceeded for SoftSeconds. 0 disables a limit.
type BufferLimit struct {
	Hard        int64
	Soft        int64
	SoftSeconds int64
}

// ClientBufferLimits holds client-output-buffer-limit, indexed by
// ClientClass.
type ClientBufferLimits [3]BufferLimit

// Keyspace notification classes, as bits of Int("notify-keyspace-events").
const (
	NotifyKeyspace = 1 << iota // K
	NotifyKeyevent             // E
	NotifyGeneric              // g
	NotifyString               // $
	NotifyList                 // l
	NotifySet                  // s
	NotifyHash                 // h
	NotifyZSet                 // z
	NotifyExpired              // x
	NotifyEvicted              // e
	NotifyStream               // t
	NotifyKeyMiss              // m (not part of A)
	NotifyModule               // d
	NotifyNew                  // n (not part of A)

	// NotifyAll is what 'A' stands for.
	NotifyAll = NotifyGeneric | NotifyString | NotifyList | NotifySet | NotifyHash | NotifyZSet |
		NotifyExpired | NotifyEvicted | NotifyStream | NotifyModule
)

// ---- save

func parseSave(words []string, prev *value, accumulate bool) (*value, string) {
	if len(words) == 1 && words[0] == "" {
		words = nil
	}
	if len(words)%2 != 0 {
		return nil, "Invalid save parameters"
	}
	var params []SaveParam
	if accumulate && len(words) > 0 {
		if old, ok := prev.x.([]SaveParam); ok {
			params = append(params, old...)
		}
	}
	for j := 0; j < len(words); j += 2 {
		secs, err1 := strconv.ParseInt(words[j], 10, 64)
		changes, err2 := strconv.ParseInt(words[j+1], 10, 64)
		if err1 != nil || err2 != nil || secs < 1 || changes < 0 {
			return nil, "Invalid save parameters"
		}
		params = append(params, SaveParam{Seconds: secs, Changes: changes})
	}
	parts := make([]string, 0, 2*len(params))
	for _, p := range params {
		parts = append(parts, strconv.FormatInt(p.Seconds, 10), strconv.FormatInt(p.Changes, 10))
	}
	return &value{s: strings.Join(parts, " "), n: int64(len(params)), x: params}, ""
}

// ---- client-output-buffer-limit

func parseClientClass(s string) (ClientClass, bool) {
	switch strings.ToLower(s) {
	case "normal":
		return ClassNormal, true
	case "slave", "replica":
		return ClassReplica, true
	case "pubsub":
		return ClassPubSub, true
	}
	return 0, false
}

func parseOutputBufferLimit(words []string, prev *value, _ bool) (*value, string) {
	if len(words) == 1 && words[0] == "" {
		words = nil
	}
	if len(words)%4 != 0 {
		return nil, "Wrong number of arguments in buffer limit configuration."
	}
	var lim ClientBufferLimits
	if old, ok := prev.x.(ClientBufferLimits); ok {
		lim = old
	}
	for j := 0; j < len(words); j += 4 {
		class, ok := parseClientClass(words[j])
		if !ok {
			return nil, "Invalid client class specified in buffer limit configuration."
		}
		hard, ok1 := ParseMemory(words[j+1])
		soft, ok2 := ParseMemory(words[j+2])
		secs, err := strconv.ParseInt(words[j+3], 10, 64)
		if !ok1 || !ok2 || err != nil || secs < 0 {
			return nil, "Error in hard, soft or soft_seconds setting in buffer limit configuration."
		}
		lim[class] = BufferLimit{Hard: hard, Soft: soft, SoftSeconds: secs}
	}
	return &value{s: formatOutputBufferLimit(lim), x: lim}, ""
}

func formatOutputBufferLimit(lim ClientBufferLimits) string {
	parts := make([]string, 0, 4*len(lim))
	for i, l := range lim {
		parts = append(parts, ClientClass(i).String(), strconv.FormatInt(l.Hard, 10),
			strconv.FormatInt(l.Soft, 10), strconv.FormatInt(l.SoftSeconds, 10))
	}
	return strings.Join(parts, " ")
}

// ---- bind

const maxBindAddrs = 16

func parseBind(words []string, _ *value, _ bool) (*value, string) {
	if len(words) > maxBindAddrs {
		return nil, "Too many bind addresses specified."
	}
	if len(words) == 1 && words[0] == "" {
		words = nil
	}
	addrs := append([]string(nil), words...)
	return &value{s: strings.Join(addrs, " "), n: int64(len(addrs)), x: addrs}, ""
}

// ---- notify-keyspace-events

func parseNotify(words []string, _ *value, _ bool) (*value, string) {
	if len(words) != 1 {
		return nil, "wrong number of arguments"
	}
	flags := 0
	for _, c := range []byte(words[0]) {
		switch c {
		case 'A':
			flags |= NotifyAll
		case 'g':
			flags |= NotifyGeneric
		case '$':
			flags |= NotifyString
		case 'l':
			flags |= NotifyList
		case 's':
			flags |= NotifySet
		case 'h':
			flags |= NotifyHash
		case 'z':
			flags |= NotifyZSet
		case 'x':
			flags |= NotifyExpired
		case 'e':
			flags |= NotifyEvicted
		case 'K':
			flags |= NotifyKeyspace
		case 'E':
			flags |= NotifyKeyevent
		case 't':
			flags |= NotifyStream
		case 'm':
			flags |= NotifyKeyMiss
		case 'd':
			flags |= NotifyModule
		case 'n':
			flags |= NotifyNew
		default:
			return nil, "Invalid event class character. Use 'Ag$lshzxeKEtmdn'."
		}
	}
	return &value{s: formatNotify(flags), n: int64(flags)}, ""
}

// formatNotify prints flags in Redis's canonical order.
func formatNotify(flags int) string {
	var b strings.Builder
	if flags&NotifyAll == NotifyAll {
		b.WriteByte('A')
	} else {
		for _, f := range []struct {
			bit int
			c   byte
		}{{NotifyGeneric, 'g'}, {NotifyString, '$'}, {NotifyList, 'l'}, {NotifySet, 's'},
			{NotifyHash, 'h'}, {NotifyZSet, 'z'}, {NotifyExpired, 'x'}, {NotifyEvicted, 'e'},
			{NotifyStream, 't'}, {NotifyModule, 'd'}, {NotifyNew, 'n'}} {
			if flags&f.bit != 0 {
				b.WriteByte(f.c)
			}
		}
	}
	if flags&NotifyKeyspace != 0 {
		b.WriteByte('K')
	}
	if flags&NotifyKeyevent != 0 {
		b.WriteByte('E')
	}
	if flags&NotifyKeyMiss != 0 {
		b.WriteByte('m')
	}
	return b.String()
}

// ---- dir

func parseDir(words []string, _ *value, _ bool) (*value, string) {
	if len(words) != 1 {
		return nil, "wrong number of arguments"
	}
	abs, err := filepath.Abs(words[0])
	if err != nil {
		return nil, errnoText(err)
	}
	st, err := os.Stat(abs)
	if err != nil {
		return nil, errnoText(err)
	}
	if !st.IsDir() {
		return nil, errnoText(syscall.ENOTDIR)
	}
	return &value{s: abs}, ""
}

func applyDir(c *Config, v *value) error {
	if !c.chdir.Load() {
		return nil
	}
	return os.Chdir(v.s)
}

// errnoText renders err like C's strerror() ("No such file or directory").
func errnoText(err error) string {
	var errno syscall.Errno
	msg := err.Error()
	if errors.As(err, &errno) {
		msg = errno.Error()
	}
	if msg != "" {
		msg = strings.ToUpper(msg[:1]) + msg[1:]
	}
	return msg
}

// ---- replicaof

func parseReplicaOf(words []string, _ *value, _ bool) (*value, string) {
	if len(words) == 1 && words[0] == "" {
		return &value{}, ""
	}
	if len(words) != 2 {
		return nil, "wrong number of arguments"
	}
	if strings.EqualFold(words[0], "no") && strings.EqualFold(words[1], "one") {
		return &value{}, ""
	}
	port, err := strconv.ParseInt(words[1], 10, 64)
	if err != nil || port < 0 || port > 65535 {
		return nil, "Invalid master port"
	}
	return &value{s: words[0] + " " + strconv.FormatInt(port, 10), n: port, x: words[0]}, ""
}

// ---- trace-actors

func parseTraceActors(words []string, _ *value, _ bool) (*value, string) {
	var kinds []string
	for _, w := range words {
		for _, k := range strings.FieldsFunc(strings.ToLower(w), func(r rune) bool {
			return r == ' ' || r == ',' || r == '\t'
		}) {
			for _, r := range k {
				if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.') {
					return nil, "Invalid actor kind '" + k + "'"
				}
			}
			kinds = append(kinds, k)
		}
	}
	return &value{s: strings.Join(kinds, " "), n: int64(len(kinds)), x: kinds}, ""
}

// ---- oom-score-adj-values (compat)

func parseOOMScoreAdjValues(words []string, _ *value, _ bool) (*value, string) {
	if len(words) != 3 {
		return nil, "wrong number of arguments"
	}
	for _, w := range words {
		v, err := strconv.ParseInt(w, 10, 64)
		if err != nil || v < -2000 || v > 2000 {
			return nil, "Invalid oom-score-adj-values, elements must be between -2000 and 2000."
		}
	}
	parts := make([]string, 3)
	for i, w := range words {
		v, _ := strconv.ParseInt(w, 10, 64)
		parts[i] = strconv.FormatInt(v, 10)
	}
	return &value{s: strings.Join(parts, " ")}, ""
}

// ---- latency-tracking-info-percentiles (compat)

func parsePercentiles(words []string, _ *value, _ bool) (*value, string) {
	if len(words) == 1 && words[0] == "" {
		words = nil
	}
	parts := make([]string, 0, len(words))
	for _, w := range words {
		f, err := strconv.ParseFloat(w, 64)
		if err != nil {
			return nil, "Invalid latency-tracking-info-percentiles parameters"
		}
		if f < 0 || f > 100 {
			return nil, "latency-tracking-info-percentiles parameters should sit between [0.0,100.0]"
		}
		parts = append(parts, strconv.FormatFloat(f, 'f', -1, 64))
	}
	return &value{s: strings.Join(parts, " ")}, ""
}

// ---- string checks

func isBaseName(s string) bool { return !strings.ContainsAny(s, `/\`) }

func checkDBFilename(s string) string {
	if !isBaseName(s) {
		return "dbfilename can't be a path, just a filename"
	}
	return ""
}

func checkAOFFilename(s string) string {
	if s == "" {
		return "appendfilename can't be empty"
	}
	if !isBaseName(s) {
		return "appendfilename can't be a path, just a filename"
	}
	return ""
}

func checkAOFDirname(s string) string {
	if s == "" {
		return "appenddirname can't be empty"
	}
	if !isBaseName(s) {
		return "appenddirname can't be a path, just a dirname"
	}
	return ""
}

func checkHostname(s string) string {
	if len(s) >= 256 {
		return "Hostnames must be less than 256 characters"
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '.') {
			return "Hostnames may only contain alphanumeric characters, hyphens or dots"
		}
	}
	return ""
}

// ---- shutdown-on-sigint, shutdown-on-sigterm

// Shutdown flags of shutdown-on-sigint/-sigterm (Int gives their OR), as
// SHUTDOWN's options: save, nosave, now (do not wait for lagging replicas),
// force (exit even if the final save fails), failover (a cluster primary
// hands its slots to a replica first, as Valkey 9). 0 is "default".
const (
	ShutdownSave = 1 << iota
	ShutdownNoSave
	ShutdownNow
	ShutdownForce
	ShutdownFailover
)

var shutdownFlagNames = []struct {
	name string
	bit  int64
}{{"save", ShutdownSave}, {"nosave", ShutdownNoSave}, {"now", ShutdownNow}, {"force", ShutdownForce},
	{"failover", ShutdownFailover}}

func parseShutdownOnSig(words []string, _ *value, _ bool) (*value, string) {
	const choices = "argument(s) must be one of the following: default, save, nosave, now, force, failover"
	if len(words) == 0 {
		return nil, choices
	}
	var flags int64
	for _, w := range words {
		found := strings.EqualFold(w, "default")
		for _, f := range shutdownFlagNames {
			if strings.EqualFold(w, f.name) {
				flags |= f.bit
				found = true
			}
		}
		if !found {
			return nil, choices
		}
	}
	if flags&ShutdownSave != 0 && flags&ShutdownNoSave != 0 {
		return nil, "shutdown options SAVE and NOSAVE can't be used simultaneously"
	}
	var names []string
	for _, f := range shutdownFlagNames {
		if flags&f.bit != 0 {
			names = append(names, f.name)
		}
	}
	if len(names) == 0 {
		names = []string{"default"}
	}
	return &value{s: strings.Join(names, " "), n: flags}, ""
}

// ---- maxmemory-clients (compat): bytes, or a percentage of maxmemory
// ("10%", kept as a negative number as Redis does)

func parseMaxmemoryClients(words []string, _ *value, _ bool) (*value, string) {
	if len(words) != 1 {
		return nil, "wrong number of arguments"
	}
	w := words[0]
	if n, ok := ParseMemory(w); ok {
		return &value{s: strconv.FormatInt(n, 10), n: n}, ""
	}
	if len(w) > 1 && w[len(w)-1] == '%' {
		if p, ok := parseStrictInt(w[:len(w)-1]); ok && p >= 0 {
			if p > 100 {
				return nil, "percentage argument must be less or equal to 100"
			}
			return &value{s: strconv.FormatInt(p, 10) + "%", n: -p}, ""
		}
	}
	return nil, "argument must be a memory or percent value"
}

// ---- unixsocketperm (compat): an octal file mode

func parseOctalPerm(words []string, _ *value, _ bool) (*value, string) {
	if len(words) != 1 {
		return nil, "wrong number of arguments"
	}
	n, err := strconv.ParseInt(words[0], 8, 64)
	if err != nil {
		return nil, "argument couldn't be parsed as an octal number"
	}
	if n < 0 || n > 0o777 {
		return nil, "argument must be between 0 and 511 inclusive"
	}
	return &value{s: strconv.FormatInt(n, 8), n: n}, ""
}
