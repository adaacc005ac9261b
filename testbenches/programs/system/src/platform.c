/* Out-of-line platform helpers, always compiled for ARM state (see platform.h). */
#include "platform.h"

__attribute__((target("arm"), noinline)) uint32_t ccnt(void)
{
    uint32_t v;
    __asm__ volatile("mrc p14, 0, %0, c1, c0, 0" : "=r"(v));
    return v;
}

__attribute__((target("arm"), noinline)) void irq_on(void)
{
    uint32_t t;
    __asm__ volatile("mrs %0, cpsr\n\tbic %0, %0, #0x80\n\tmsr cpsr_c, %0" : "=r"(t) : : "memory");
}

__attribute__((target("arm"), noinline)) uint32_t irq_save(void)
{
    uint32_t old, t;
    __asm__ volatile("mrs %0, cpsr\n\torr %1, %0, #0x80\n\tmsr cpsr_c, %1" : "=r"(old), "=r"(t) : : "memory");
    return old;
}

__attribute__((target("arm"), noinline)) void irq_restore(uint32_t cpsr)
{
    __asm__ volatile("msr cpsr_c, %0" : : "r"(cpsr) : "memory");
}

void put_char(int c)
{
    while (!(UART_STAT & 2u))
        ;
    UART_DATA = (uint32_t)c;
}

void put_str(const char *s)
{
    while (*s)
        put_char(*s++);
}

void put_hex(uint32_t v)
{
    for (int i = 28; i >= 0; i -= 4)
        put_char("0123456789abcdef"[(v >> i) & 15]);
}

void put_dec(uint32_t v)
{
    char buf[11];
    int n = 0;
    do {
        buf[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    while (n)
        put_char(buf[--n]);
}
