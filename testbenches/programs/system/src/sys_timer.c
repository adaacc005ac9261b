/* Timer interrupts at jittered times over compute work, a critical section that holds an
   interrupt pending until it unmasks, polling of the free-running counter, and a PRNG
   seeded from the CP14 cycle counter whose values steer control flow. */
#include "platform.h"

#define PERIOD 700u   /* timer ticks (4 cycles each) between interrupts */
#define TICKS 40u

static volatile uint32_t ticks;
static volatile uint32_t shared_sum;
static uint32_t table[512];

void irq_handler(void)
{
    uint32_t pend = INT_PEND;
    if (pend & INT_TIMER) {
        TIMER_STAT = 1;
        ticks++;
        if (ticks < TICKS)
            TIMER_MATCH = TIMER_COUNT + PERIOD;
    }
}

static uint32_t lcg(uint32_t *s)
{
    *s = *s * 1664525u + 1013904223u;
    return *s >> 8;
}

int main(void)
{
    for (uint32_t i = 0; i < 512; i++)
        table[i] = i * 2654435761u;
    trace_start();

    uint32_t seed = ccnt();
    INT_MASK = INT_TIMER;
    TIMER_MATCH = TIMER_COUNT + PERIOD;
    irq_on();

    uint32_t rounds = 0, odd = 0, crit = 0;
    while (ticks < TICKS) {
        /* Work whose length depends on the counter-seeded PRNG. */
        uint32_t n = 64 + (lcg(&seed) & 127);
        uint32_t acc = 0;
        for (uint32_t i = 0; i < n; i++) {
            uint32_t v = table[(i * 7 + rounds) & 511];
            acc = (acc << 3 | acc >> 29) ^ v;
            if (v & 0x100)
                acc += i;
        }
        table[rounds & 511] ^= acc;
        /* Critical section: the timer may fire inside and is taken at the unmask. */
        uint32_t saved = irq_save();
        for (uint32_t i = 0; i < 32; i++)
            shared_sum += table[(acc + i) & 511] >> 4;
        crit++;
        irq_restore(saved);
        /* Branch on the cycle counter and the timer count. */
        if (ccnt() & 1)
            odd++;
        uint32_t until = TIMER_COUNT + 16;
        while (TIMER_COUNT < until)
            ;
        rounds++;
    }
    INT_MASK = 0;
    put_str("sys_timer: ticks=");
    put_dec(ticks);
    put_str(" rounds=");
    put_dec(rounds);
    put_str(" crit=");
    put_dec(crit);
    put_str(" odd=");
    put_dec(odd);
    put_str(" sum=");
    put_hex(shared_sum);
    put_char('\n');
    return 0;
}
