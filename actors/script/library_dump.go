package script

import (
	"errors"
	"fmt"

	"github.com/slotd/slotd/actors/engine/rdb"
)

// FUNCTION DUMP / RESTORE payloads and snapshot records, in Redis 7.0's
// format: per library the opcode RDB_OPCODE_FUNCTION2 and the library's
// code as an RDB string; a payload ends with the RDB version and a CRC-64,
// like a DUMP payload.

// AppendRecords appends every library as RDB records (snapshots write them
// before the keys).
func (l *Libraries) AppendRecords(b []byte, compress bool) []byte {
	for _, lib := range l.List("*") {
		b = append(b, rdb.OpFunction2)
		b = rdb.AppendString(b, lib.Code, compress)
	}
	return b
}

// Dump is FUNCTION DUMP's payload.
func (l *Libraries) Dump(compress bool) []byte {
	e := rdb.NewEncoder(rdb.Options{Compress: compress})
	e.B = l.AppendRecords(e.B, compress)
	return e.Payload()
}

// ErrBadPayload is FUNCTION RESTORE's reply to a payload whose footer does
// not check.
var ErrBadPayload = errors.New("DUMP payload version or checksum are wrong")

// Restore is FUNCTION RESTORE payload with a policy (RestoreAppend,
// RestoreReplace, RestoreFlush); errors are replies without "ERR ".
func (l *Libraries) Restore(payload []byte, policy int) error {
	if !rdb.Verify(payload) {
		return ErrBadPayload
	}
	f := rdb.NewPayloadReader(payload[:len(payload)-10])
	var codes []string
	for f.Pos() < len(payload)-10 {
		op, err := f.Byte()
		if err != nil {
			return errors.New("can not read data type")
		}
		code, err := ReadRecord(f, op)
		if err != nil {
			return err
		}
		codes = append(codes, code)
	}
	return l.Add(codes, policy)
}

// ReadRecord reads the library record that follows opcode op (245, or the
// 7.0 release candidates' 246 with name, engine and description fields)
// and returns the library's code.
func ReadRecord(f *rdb.FileReader, op byte) (string, error) {
	switch op {
	case rdb.OpFunction2:
		code, err := f.String()
		if err != nil {
			return "", errors.New("failed loading the given functions payload")
		}
		return string(code), nil
	case rdb.OpFunctionPreGA:
		name, err1 := f.String()
		engine, err2 := f.String()
		if err1 != nil || err2 != nil {
			return "", errors.New("Failed loading library name")
		}
		hasDesc, err := f.Len()
		if err != nil {
			return "", errors.New("Failed loading library description indicator")
		}
		if hasDesc != 0 {
			if _, err := f.String(); err != nil {
				return "", errors.New("Failed loading library description")
			}
		}
		blob, err := f.String()
		if err != nil {
			return "", errors.New("Failed loading library blob")
		}
		return fmt.Sprintf("#!%s name=%s\n%s", engine, name, blob), nil
	}
	return "", errors.New("given type is not a function")
}
