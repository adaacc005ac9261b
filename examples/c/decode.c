/* decode: a trace file (or standard input) plus the program's ELF files -> the executed
 * instruction addresses, one per line as `streamtrace decode -o` writes them
 * (`%08x A|T`), through libstreamtrace's streaming C API.
 *
 *   decode CONFIG TRACE|- PROG.elf [MORE.elf ...]
 *
 * CONFIG `file`: TRACE is a trace file (what `streamtrace run --trace-out` writes), whose
 * header names the configuration; otherwise TRACE is a bare trace-port bit stream (what a
 * probe captures, `--raw`) encoded with CONFIG.
 *
 * The trace is read in 4 KiB chunks and pushed as it arrives; addresses come out through
 * the fast path (st_decoder_read_addresses), the other elements through st_decoder_next.
 * Element summaries and errors go to standard error. Exit status: 0 if the trace ended
 * cleanly with no error, 1 otherwise, 2 on bad arguments. Build: scripts/capi.sh. */

#include <stdio.h>
#include <string.h>

#include "streamtrace.h"

static int fail(const char *what) {
    fprintf(stderr, "decode: %s: %s\n", what, st_last_error());
    return 2;
}

static void print_addresses(const uint32_t *a, size_t n) {
    for (size_t i = 0; i < n; i++)
        printf("%08x %c\n", a[i] & ~1u, (a[i] & 1) ? 'T' : 'A');
}

int main(int argc, char **argv) {
    if (argc < 4) {
        fprintf(stderr, "usage: decode CONFIG TRACE|- PROG.elf [MORE.elf ...]\n");
        return 2;
    }
    StConfig *cfg = NULL;
    StImage *image = NULL;
    StDecoder *dec = NULL;
    int from_file = strcmp(argv[1], "file") == 0;
    if (!from_file && st_config_parse(argv[1], &cfg) != ST_OK) return fail("configuration");
    if (st_image_new(&image) != ST_OK) return fail("image");
    for (int i = 3; i < argc; i++)
        if (st_image_add_elf(image, argv[i]) != ST_OK) {
            int r = fail(argv[i]);
            st_image_free(image);
            st_config_free(cfg);
            return r;
        }
    if ((from_file ? st_decoder_new_from_file(image, &dec) : st_decoder_new(cfg, image, &dec)) != ST_OK)
        return fail("decoder");
    /* The decoder holds its own reference to the image. */
    st_image_free(image);
    st_config_free(cfg);

    FILE *in = strcmp(argv[2], "-") == 0 ? stdin : fopen(argv[2], "rb");
    if (!in) {
        perror(argv[2]);
        st_decoder_free(dec);
        return 2;
    }
    unsigned char chunk[4096];
    uint32_t addrs[1024];
    unsigned long long instructions = 0, errors = 0, exceptions = 0, syncs = 0, overflows = 0;
    int ended = 0, done = 0;
    while (!done) {
        size_t n = 0;
        StStatus s = st_decoder_read_addresses(dec, addrs, sizeof addrs / sizeof addrs[0], &n);
        print_addresses(addrs, n);
        instructions += n;
        if (s == ST_OK) continue;
        if (s == ST_NEED_INPUT) {
            size_t got = fread(chunk, 1, sizeof chunk, in);
            if (got > 0)
                st_decoder_push(dec, chunk, got);
            else
                st_decoder_finish(dec);
        } else if (s == ST_ELEMENT_PENDING) {
            StElement el;
            if (st_decoder_next(dec, &el) != ST_OK) continue;
            switch (el.kind) {
            case ST_ELEM_EXCEPTION: exceptions++; break;
            case ST_ELEM_SYNC: syncs++; break;
            case ST_ELEM_OVERFLOW:
                overflows++;
                fprintf(stderr, "decode: bit %llu: overflow, %u instructions lost\n",
                        (unsigned long long)el.bit_offset, el.lost);
                break;
            case ST_ELEM_END: ended = 1; break;
            case ST_ELEM_ERROR:
                errors++;
                fprintf(stderr, "decode: %s\n", st_decoder_error_message(dec));
                break;
            case ST_ELEM_RESYNC:
                fprintf(stderr, "decode: resuming after the sync marker ending at bit %llu\n",
                        (unsigned long long)el.bit_offset);
                break;
            default: break;
            }
        } else if (s == ST_END) {
            done = 1;
            char name[256];
            if (from_file && st_decoder_config(dec, name, sizeof name, NULL) == ST_OK)
                fprintf(stderr, "decode: the trace file's configuration: %s\n", name);
        } else {
            fail("decoding");
            errors++;
            done = 1;
        }
    }
    if (in != stdin) fclose(in);
    st_decoder_free(dec);
    fprintf(stderr, "decode: %llu instructions, %llu exceptions, %llu syncs, %llu overflows, %llu errors, %s\n",
            instructions, exceptions, syncs, overflows, errors, ended ? "ended cleanly" : "no END");
    return (ended && errors == 0) ? 0 : 1;
}
