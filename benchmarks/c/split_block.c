/* split_block.c: the day's work per key in plain C, the loop `make bench-day` compares with.

   For every 64-bit click ID, in order: MurmurHash3 x64 128 (seed 0) of its 8 little-endian
   bytes, h = the first half; its block ((h >> 32) * num_blocks) >> 32 of eight 32-bit words;
   in word w the bit (low32(h) * SALT[w] mod 2**32) >> 27 (Parquet's split-block layout, as
   bloomedu.variants.BlockedBloomFilter); "was it there?" (all eight bits set), then set them.
   The hash of the key D places ahead is computed first and its block prefetched, so the
   cache miss of a key overlaps the work on the keys before it.

   Two modes (benchmarks/c_reference.py compiles and runs it):
     split_block time NUM_BLOCKS NUM_KEYS SEED
         keys splitmix64((SEED mod 2**24) * 2**40 + i), i = 0 .. NUM_KEYS-1 (the genuine IDs of
         bloomedu.workloads.day.day_chunks), made 2**20 at a time outside the timed part; the
         filter is zeroed (first touch) before it.  Prints one line of name=value pairs.
     split_block file NUM_BLOCKS KEYS OUT_WORDS OUT_PRESENT
         keys from a file of little-endian uint64; writes the filter's words (little-endian
         uint32) and one byte per key (1: all its bits were set before it), for the tests. */

#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#define AHEAD 16            /* keys hashed ahead of the one written: the prefetch distance */
#define CHUNK (1u << 20)    /* keys made per call of make_keys */

static const uint32_t SALT[8] = {0x47B6137Bu, 0x44974D91u, 0x8824AD5Bu, 0xA2B7289Du,
                                 0x705495C7u, 0x2DF1424Bu, 0x9EFC4947u, 0x5C6BFB31u};

static uint64_t rotl64(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }

static uint64_t fmix64(uint64_t k) {
    k ^= k >> 33;
    k *= 0xFF51AFD7ED558CCDull;
    k ^= k >> 33;
    k *= 0xC4CEB9FE1A85EC53ull;
    k ^= k >> 33;
    return k;
}

/* MurmurHash3 x64 128 with seed 0 of 8 bytes: no 16-byte block, the key is the tail k1. */
static uint64_t murmur_h1(uint64_t key) {
    uint64_t k1 = key * 0x87C37B91114253D5ull;
    k1 = rotl64(k1, 31) * 0x4CF5AD432745937Full;
    uint64_t h1 = k1 ^ 8, h2 = 8;  /* h ^= length */
    h1 += h2;
    h2 += h1;
    h1 = fmix64(h1);
    h2 = fmix64(h2);
    return h1 + h2;
}

static uint64_t splitmix64(uint64_t counter) {
    uint64_t z = counter * 0x9E3779B97F4A7C15ull + 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static uint32_t *block_of(uint32_t *words, uint64_t num_blocks, uint64_t h) {
    return words + 8 * (((h >> 32) * num_blocks) >> 32);
}

/* In then add for keys[0..n-1]; present[i] = 1 if key i's bits were all set (NULL: not kept).
   Returns how many were. */
static uint64_t in_then_add(uint32_t *words, uint64_t num_blocks, const uint64_t *keys,
                            size_t n, uint8_t *present) {
    uint64_t ahead[AHEAD], found = 0;
    for (size_t i = 0; i < n && i < AHEAD; i++) {
        ahead[i] = murmur_h1(keys[i]);
        __builtin_prefetch(block_of(words, num_blocks, ahead[i]), 1);
    }
    for (size_t i = 0; i < n; i++) {
        uint64_t h = ahead[i % AHEAD];
        if (i + AHEAD < n) {
            uint64_t next = murmur_h1(keys[i + AHEAD]);
            ahead[i % AHEAD] = next;
            __builtin_prefetch(block_of(words, num_blocks, next), 1);
        }
        uint32_t *block = block_of(words, num_blocks, h), low = (uint32_t)h, all = 1;
        for (int w = 0; w < 8; w++) {
            uint32_t mask = 1u << ((low * SALT[w]) >> 27);
            all &= (block[w] & mask) != 0;
            block[w] |= mask;
        }
        found += all;
        if (present) present[i] = (uint8_t)all;
    }
    return found;
}

static uint32_t *new_filter(uint64_t num_blocks) {
    size_t bytes = 32 * num_blocks;
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) { perror("mmap"); exit(2); }
#ifdef MADV_HUGEPAGE
    madvise(p, bytes, MADV_HUGEPAGE);  /* as numpy asks for its large arrays */
#endif
    memset(p, 0, bytes);               /* the first touch, outside the timed part */
    return p;
}

static double seconds(clockid_t clock) {
    struct timespec t;
    clock_gettime(clock, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

static int time_mode(uint64_t num_blocks, uint64_t num_keys, uint64_t seed) {
    uint32_t *words = new_filter(num_blocks);
    uint64_t *keys = malloc(CHUNK * sizeof *keys), base = (seed % (1ull << 24)) << 40, found = 0;
    double wall = 0, cpu = 0;
    if (!keys) { perror("malloc"); return 2; }
    for (uint64_t start = 0; start < num_keys; start += CHUNK) {
        size_t n = num_keys - start < CHUNK ? num_keys - start : CHUNK;
        for (size_t i = 0; i < n; i++) keys[i] = splitmix64(base + start + i);
        double w0 = seconds(CLOCK_MONOTONIC), c0 = seconds(CLOCK_PROCESS_CPUTIME_ID);
        found += in_then_add(words, num_blocks, keys, n, NULL);
        wall += seconds(CLOCK_MONOTONIC) - w0;
        cpu += seconds(CLOCK_PROCESS_CPUTIME_ID) - c0;
    }
    printf("keys=%llu found=%llu wall_s=%.6f cpu_s=%.6f ns_per_key=%.3f\n",
           (unsigned long long)num_keys, (unsigned long long)found, wall, cpu,
           num_keys ? wall * 1e9 / num_keys : 0.0);
    return 0;
}

static int file_mode(uint64_t num_blocks, const char *keys_path, const char *words_path,
                     const char *present_path) {
    FILE *in = fopen(keys_path, "rb");
    if (!in) { perror(keys_path); return 2; }
    fseek(in, 0, SEEK_END);
    size_t n = (size_t)ftell(in) / 8;
    rewind(in);
    uint64_t *keys = malloc(n * 8 + 8);
    uint8_t *present = malloc(n + 1);
    if (!keys || !present || fread(keys, 8, n, in) != n) { perror("reading keys"); return 2; }
    fclose(in);
    uint32_t *words = new_filter(num_blocks);
    in_then_add(words, num_blocks, keys, n, present);
    FILE *out = fopen(words_path, "wb"), *flags = fopen(present_path, "wb");
    if (!out || !flags || fwrite(words, 32, num_blocks, out) != num_blocks
        || fwrite(present, 1, n, flags) != n) { perror("writing"); return 2; }
    fclose(out);
    fclose(flags);
    return 0;
}

int main(int argc, char **argv) {
    if (argc == 5 && strcmp(argv[1], "time") == 0)
        return time_mode(strtoull(argv[2], NULL, 10), strtoull(argv[3], NULL, 10),
                         strtoull(argv[4], NULL, 10));
    if (argc == 6 && strcmp(argv[1], "file") == 0)
        return file_mode(strtoull(argv[2], NULL, 10), argv[3], argv[4], argv[5]);
    fprintf(stderr, "usage: %s time NUM_BLOCKS NUM_KEYS SEED | "
                    "file NUM_BLOCKS KEYS OUT_WORDS OUT_PRESENT\n", argv[0]);
    return 2;
}
