// Typed wrappers over libcurl's variadic calls, which Swift cannot call directly.
#include <curl/curl.h>

static inline CURLcode mp_curl_setopt_long(CURL *h, CURLoption o, long v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode mp_curl_setopt_off(CURL *h, CURLoption o, curl_off_t v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode mp_curl_setopt_str(CURL *h, CURLoption o, const char *v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode mp_curl_setopt_ptr(CURL *h, CURLoption o, void *v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode mp_curl_setopt_slist(CURL *h, CURLoption o, struct curl_slist *v) { return curl_easy_setopt(h, o, v); }
typedef size_t (*mp_curl_data_cb)(char *, size_t, size_t, void *);
static inline CURLcode mp_curl_setopt_datacb(CURL *h, CURLoption o, mp_curl_data_cb v) { return curl_easy_setopt(h, o, v); }
typedef int (*mp_curl_xferinfo_cb)(void *, curl_off_t, curl_off_t, curl_off_t, curl_off_t);
static inline CURLcode mp_curl_setopt_xferinfocb(CURL *h, mp_curl_xferinfo_cb v) { return curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, v); }
static inline CURLcode mp_curl_getinfo_long(CURL *h, CURLINFO i, long *v) { return curl_easy_getinfo(h, i, v); }
static inline CURLcode mp_curl_getinfo_off(CURL *h, CURLINFO i, curl_off_t *v) { return curl_easy_getinfo(h, i, v); }
static inline CURLcode mp_curl_getinfo_ptr(CURL *h, CURLINFO i, void **v) { return curl_easy_getinfo(h, i, v); }
static inline CURLMcode mp_curl_multi_setopt_long(CURLM *m, CURLMoption o, long v) { return curl_multi_setopt(m, o, v); }
/// The easy handle a finished-transfer message (`CURLMSG_DONE`) concerns, or NULL for other messages.
static inline CURL *mp_curl_msg_done_handle(CURLMsg *m) { return m->msg == CURLMSG_DONE ? m->easy_handle : NULL; }
/// The transfer result carried by a `CURLMSG_DONE` message (a union member Swift cannot read directly).
static inline CURLcode mp_curl_msg_result(CURLMsg *m) { return m->data.result; }

#include <unistd.h>
#include <stdint.h>

// Uploads (PUT) stream from a file descriptor passed as READDATA; Swift closures cannot be
// handed to libcurl as plain C callbacks with state, so the reader lives here.
static size_t mp_curl_read_fd(char *buffer, size_t size, size_t count, void *context) {
    ssize_t n = read((int)(intptr_t)context, buffer, size * count);
    return n < 0 ? CURL_READFUNC_ABORT : (size_t)n;
}
static inline CURLcode mp_curl_upload_fd(CURL *h, int fd, curl_off_t size) {
    CURLcode code = curl_easy_setopt(h, CURLOPT_UPLOAD, 1L);
    if (code == CURLE_OK) code = curl_easy_setopt(h, CURLOPT_READFUNCTION, mp_curl_read_fd);
    if (code == CURLE_OK) code = curl_easy_setopt(h, CURLOPT_READDATA, (void *)(intptr_t)fd);
    if (code == CURLE_OK) code = curl_easy_setopt(h, CURLOPT_INFILESIZE_LARGE, size);
    return code;
}
