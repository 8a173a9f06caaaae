/* write_cursor.c — the advance and the walk of a gather write's cursor. */
#include "write_cursor.h"

void zl_write_cursor_advance(zl_write_cursor *c, size_t bytes)
{
    while (c->index < c->count) {
        size_t left = c->iov[c->index].len - c->offset;
        if (bytes < left) {
            c->offset += bytes;
            return;
        }
        bytes -= left;
        c->index++;
        c->offset = 0;
    }
}

bool zl_write_cursor_next(zl_write_cursor *walk, size_t max_len,
                          zl_iovec *piece)
{
    while (walk->index < walk->count) {
        const zl_iovec *v = &walk->iov[walk->index];
        size_t left = v->len - walk->offset;
        if (left == 0) {
            walk->index++;
            walk->offset = 0;
            continue;
        }
        size_t chunk = left > max_len ? max_len : left;
        piece->base = (char *)v->base + walk->offset;
        piece->len = chunk;
        walk->offset += chunk;
        if (walk->offset == v->len) {
            walk->index++;
            walk->offset = 0;
        }
        return true;
    }
    return false;
}
