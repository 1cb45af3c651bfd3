// Package zsetcmd owns the sorted set and geo commands (ZADD, ZRANGE and
// its variants, ZUNIONSTORE and friends, ZPOPMIN and the blocking BZPOPMIN,
// GEOADD, GEOSEARCH, ...) over types/zset and types/geo, run inside the
// shard that owns the keys.
package zsetcmd
