#ifndef HEARTH_CCURL_SHIM_H
#define HEARTH_CCURL_SHIM_H
#include <curl/curl.h>

/* curl_easy_setopt and curl_easy_getinfo are variadic and do not import into Swift;
   these typed wrappers are the only way Swift calls them. */
static inline CURLcode hearth_curl_setopt_long(CURL *handle, CURLoption option, long value) {
    return curl_easy_setopt(handle, option, value);
}
static inline CURLcode hearth_curl_setopt_pointer(CURL *handle, CURLoption option, void *value) {
    return curl_easy_setopt(handle, option, value);
}
static inline CURLcode hearth_curl_setopt_string(CURL *handle, CURLoption option, const char *value) {
    return curl_easy_setopt(handle, option, value);
}
static inline CURLcode hearth_curl_setopt_off_t(CURL *handle, CURLoption option, curl_off_t value) {
    return curl_easy_setopt(handle, option, value);
}
typedef size_t (*hearth_curl_data_callback)(char *buffer, size_t size, size_t count, void *context);
static inline CURLcode hearth_curl_setopt_data_callback(CURL *handle, CURLoption option, hearth_curl_data_callback value) {
    return curl_easy_setopt(handle, option, value);
}
static inline CURLcode hearth_curl_getinfo_long(CURL *handle, CURLINFO info, long *value) {
    return curl_easy_getinfo(handle, info, value);
}
static inline CURLcode hearth_curl_getinfo_pointer(CURL *handle, CURLINFO info, void **value) {
    return curl_easy_getinfo(handle, info, value);
}
static inline CURLcode hearth_curl_getinfo_double(CURL *handle, CURLINFO info, double *value) {
    return curl_easy_getinfo(handle, info, value);
}
#endif
