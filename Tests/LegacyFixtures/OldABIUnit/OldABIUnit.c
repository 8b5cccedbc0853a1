// What a unit built against boundary version 1 exports, at the symbol level: its copy of the version
// function, and an entry point that refuses a host of another version (as version 1's SDK did, by
// returning no exports). The host must refuse it naming both versions, without calling the entry.
#include "OldABIUnit.h"

uint32_t hearth_unit_abi_version(void) { return 1; }

const void *hearth_unit_entry(const void *host) {
    (void)host;
    return 0;
}
