/* Registers and helpers of the system-mode platform (docs/citcat.md section 1.1). */
#ifndef PLATFORM_H
#define PLATFORM_H

#include <stdint.h>

#define REG(a) (*(volatile uint32_t *)(a))
#define EXIT_REG    REG(0x80000000u)
#define UART_DATA   REG(0x80001000u)
#define UART_STAT   REG(0x80001004u)
#define UART_CTRL   REG(0x80001008u)
#define TIMER_COUNT REG(0x80002000u)
#define TIMER_MATCH REG(0x80002004u)
#define TIMER_STAT  REG(0x80002008u)
#define DMA_DST     REG(0x80003000u)
#define DMA_LEN     REG(0x80003004u)
#define DMA_CTRL    REG(0x80003008u)
#define DMA_STAT    REG(0x8000300Cu)
#define INT_PEND    REG(0x80004000u)
#define INT_MASK    REG(0x80004004u)

#define INT_TIMER 1u
#define INT_UART  2u
#define INT_DMA   4u

void irq_handler(void);

/* The CITCAT start-of-trace driver (start.S; docs/citcat.md 2.2). Call it in a privileged
   mode. */
void trace_start(void);

/* ARM-state helpers: coprocessor and CPSR access do not exist in Thumb state, so Thumb
   programs call these out-of-line ARM functions (platform.c). */
uint32_t ccnt(void);
void irq_on(void);
uint32_t irq_save(void);
void irq_restore(uint32_t cpsr);

void put_char(int c);
void put_str(const char *s);
void put_hex(uint32_t v);
void put_dec(uint32_t v);

#endif
