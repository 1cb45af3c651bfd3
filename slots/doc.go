// Package slots owns the mapping of keys to the 16384 cluster hash slots:
// CRC16-XMODEM, hash-tag rules, slot bitmaps and ranges, and the
// pattern→slot helper for SCAN/KEYS.
package slots

// NumSlots is the number of hash slots in a Redis Cluster keyspace.
const NumSlots = 16384

// slotMask reduces a CRC16 value to a slot number (NumSlots is a power of two).
const slotMask = NumSlots - 1
