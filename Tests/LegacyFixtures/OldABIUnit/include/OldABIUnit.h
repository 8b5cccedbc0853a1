#include <stdint.h>

uint32_t hearth_unit_abi_version(void);
const void *hearth_unit_entry(const void *host);
