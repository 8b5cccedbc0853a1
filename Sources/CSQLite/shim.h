#ifndef HEARTH_CSQLITE_SHIM_H
#define HEARTH_CSQLITE_SHIM_H
#include <sqlite3.h>
#endif
