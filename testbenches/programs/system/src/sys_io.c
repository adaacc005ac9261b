/* UART receive interrupts into a ring buffer whose bytes steer the main loop, a busy-wait
   polling phase on the UART status register, and DMA packets (completion interrupt) that
   the main loop also reads while the transfer is still running. */
#include "platform.h"

#define PACKETS 6u
#define PACKET_BYTES 256u
#define RX_BYTES 48u
#define POLL_BYTES 12u

static volatile uint8_t ring[64];
static volatile uint32_t head, tail;
static volatile uint32_t dma_done_count;
static uint32_t packet[PACKET_BYTES / 4];

void irq_handler(void)
{
    uint32_t pend = INT_PEND & INT_MASK;
    if (pend & INT_UART) {
        while (UART_STAT & 1u) {
            ring[head & 63] = (uint8_t)UART_DATA;
            head++;
        }
    }
    if (pend & INT_DMA) {
        DMA_STAT = 1;
        dma_done_count++;
    }
}

static uint32_t classify(uint32_t c, uint32_t *digits, uint32_t *upper)
{
    if (c >= '0' && c <= '9') {
        (*digits)++;
        return c - '0';
    }
    if (c >= 'A' && c <= 'Z') {
        (*upper)++;
        return c * 3;
    }
    return c ^ 0x5a;
}

int main(void)
{
    trace_start();
    uint32_t digits = 0, upper = 0, hash = 2166136261u;

    /* Phase 1: interrupt-driven receive. */
    UART_CTRL = 1;
    INT_MASK = INT_UART | INT_DMA;
    irq_on();
    for (uint32_t got = 0; got < RX_BYTES;) {
        if (tail != head) {
            uint32_t c = ring[tail & 63];
            tail++;
            got++;
            hash = (hash ^ classify(c, &digits, &upper)) * 16777619u;
        }
    }

    /* Phase 2: DMA packets; the loop sums the buffer while bursts are landing. */
    uint32_t partial = 0, sum = 0;
    for (uint32_t p = 0; p < PACKETS; p++) {
        uint32_t before = dma_done_count;
        DMA_DST = (uint32_t)packet;
        DMA_LEN = PACKET_BYTES;
        DMA_CTRL = 1;
        while (dma_done_count == before) {
            for (uint32_t i = 0; i < PACKET_BYTES / 4; i += 8)
                partial += packet[i];
        }
        for (uint32_t i = 0; i < PACKET_BYTES / 4; i++)
            sum = (sum << 1 | sum >> 31) ^ packet[i];
    }

    /* Phase 3: polled receive with the UART interrupt off. */
    UART_CTRL = 0;
    for (uint32_t got = 0; got < POLL_BYTES; got++) {
        while (!(UART_STAT & 1u))
            ;
        hash = (hash ^ classify(UART_DATA, &digits, &upper)) * 16777619u;
    }
    INT_MASK = 0;

    put_str("sys_io: hash=");
    put_hex(hash);
    put_str(" digits=");
    put_dec(digits);
    put_str(" upper=");
    put_dec(upper);
    put_str(" dma=");
    put_dec(dma_done_count);
    put_str(" sum=");
    put_hex(sum);
    put_str(" partial=");
    put_hex(partial);
    put_char('\n');
    return 0;
}
