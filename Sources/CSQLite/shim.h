#ifndef HEARTH_CSQLITE_SHIM_H
#define HEARTH_CSQLITE_SHIM_H
#include <sqlite3.h>

/// sqlite3_config is variadic, which Swift cannot call: turns off SQLite's memory statistics,
/// which otherwise take a process-wide mutex around every allocation and free. Must run before
/// SQLite initializes (it answers SQLITE_MISUSE after).
static inline int hearth_sqlite3_disable_memstatus(void) {
    return sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
}
#endif
