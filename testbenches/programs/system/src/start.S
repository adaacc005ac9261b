@ Bare-metal start-up for the system-mode platform (docs/citcat.md section 1):
@ vectors at 0, stacks for SVC and IRQ mode, .bss cleared, main() in SVC mode with
@ interrupts masked, its return value written to EXIT. IRQs go to irq_handler() in C
@ (ARM or Thumb: called through BLX).

        .syntax unified
        .arm
        .section .vectors, "ax"
        .global _start
_start:
        b       reset
        b       trap            @ undefined instruction
        b       trap            @ SWI
        b       trap            @ prefetch abort
        b       trap            @ data abort
        b       trap            @ reserved
        b       irq_entry
        b       trap            @ FIQ

        .text
reset:
        msr     cpsr_c, #0xD2           @ IRQ mode, I and F set
        ldr     sp, =__irq_stack_top
        msr     cpsr_c, #0xD3           @ SVC mode, I and F set
        ldr     sp, =__svc_stack_top
        ldr     r0, =__bss_start
        ldr     r1, =__bss_end
        mov     r2, #0
1:      cmp     r0, r1
        strlo   r2, [r0], #4
        blo     1b
        ldr     r0, =main
        blx     r0
        ldr     r1, =0x80000000         @ EXIT
        str     r0, [r1]
2:      b       2b

@ Any exception the programs do not expect ends the run with 0xDEAD and the vector's
@ link register in r1 (for a debugger).
trap:
        mov     r1, lr
        ldr     r0, =0xDEAD
        ldr     r2, =0x80000000
        str     r0, [r2]
3:      b       3b

irq_entry:
        sub     lr, lr, #4
        stmfd   sp!, {r0-r3, r12, lr}
        ldr     r0, =irq_handler
        blx     r0
        ldmfd   sp!, {r0-r3, r12, pc}^

@ The CITCAT start-of-trace driver (docs/citcat.md 2.2), as the thesis's: signal the bus
@ monitor, which invalidates its view of the caches and starts the trace, then write every
@ register of the state right after the signal (S0) to the register dump region with
@ uncached stores. Each register is stored before the driver changes it: r0 already holds
@ the region's base at S0, and the first STM takes r0-r14 as they are. Word i of the region
@ is register i of the dump order (docs/citcat.md 4.1). Called from a privileged mode, ARM
@ or Thumb (BLX), from SVC, IRQ, abort or undefined mode (not User or System: the driver
@ switches modes, and System's r14 would be the one its calls use); returns with the
@ caller's registers and interrupt mask.
        .equ    REG_DUMP, 0x8000F000
        .equ    I_F, 0xC0
        .global trace_start
        .type   trace_start, %function
trace_start:
        stmfd   sp!, {r0-r12, lr}
        mrs     r4, cpsr                @ the caller's CPSR (mode and mask)
        orr     r5, r4, #I_F
        msr     cpsr_c, r5              @ no interrupt in the middle of the dump
        ldr     r0, =REG_DUMP
        mcr     p7, 0, r0, c0, c0, 0    @ the signal: the trace starts after this
s0:     stmia   r0, {r0-r14}            @ words 0-14: r0-r14 of S0
        adr     r1, s0
        str     r1, [r0, #15*4]         @ r15 of S0: the first traced instruction
        mrs     r1, cpsr
        str     r1, [r0, #16*4]
        add     r1, r0, #17*4
        stmia   r1, {r8-r12}            @ r8-r12 of user mode (shared by the caller's mode)
        mov     r9, lr                  @ (r8-r12 are stored: free now) lr of S0, for own_bank
        and     r6, r5, #0x1F           @ the caller's mode: its r13/r14 and SPSR slots
        mov     r2, #0xD1               @ FIQ
        bl      dump_bank
        mov     r2, #0xD2               @ IRQ
        bl      dump_bank
        mov     r2, #0xD3               @ SVC
        bl      dump_bank
        mov     r2, #0xD7               @ abort
        bl      dump_bank
        mov     r2, #0xDB               @ undefined
        bl      dump_bank
        msr     cpsr_c, #0xDF           @ System: the user bank
        str     r13, [r0, #27*4]
        str     r14, [r0, #28*4]
        msr     cpsr_c, r5
        mrc     p15, 0, r1, c1, c0, 0
        str     r1, [r0, #44*4]
        mrrc    p0, 0, r1, r2, c0       @ MRA r1, r2, acc0 (XScale)
        str     r1, [r0, #45*4]
        str     r2, [r0, #46*4]
        msr     cpsr_c, r4
        ldmfd   sp!, {r0-r12, pc}
        .size   trace_start, . - trace_start

@ Store r13, r14 and SPSR of the mode in r2 (0xD1 FIQ .. 0xDB undefined) into their dump
@ slots, and for FIQ also r8-r12; returns in the mode of r5. The caller's own mode takes
@ r13 as it is (the driver does not move sp after S0) and S0's lr from r9 (the BL here
@ changed lr); its slots then equal words 13 and 14.
dump_bank:
        and     r3, r2, #0x1F
        cmp     r3, r6
        beq     own_bank
        adr     r7, bank_slots - 0x11*4
        ldr     r7, [r7, r3, lsl #2]    @ slot offsets: r13/r14 at bits 0-7, SPSR at 8-15
        msr     cpsr_c, r2
        and     r1, r7, #0xFF
        add     r1, r0, r1
        stmia   r1, {r13, r14}
        mrs     r1, spsr
        mov     r3, r7, lsr #8
        str     r1, [r0, r3]
        cmp     r2, #0xD1
        addeq   r1, r0, #22*4
        stmiaeq r1, {r8-r12}            @ r8-r12 of FIQ mode
        msr     cpsr_c, r5
        bx      lr
own_bank:
        adr     r7, bank_slots - 0x11*4
        ldr     r7, [r7, r3, lsl #2]
        and     r1, r7, #0xFF
        add     r1, r0, r1
        str     r13, [r1]
        str     r9, [r1, #4]
        mrs     r1, spsr
        mov     r3, r7, lsr #8
        str     r1, [r0, r3]
        bx      lr

@ Indexed by mode - 0x11: (SPSR offset << 8) | r13 offset, in bytes from REG_DUMP.
bank_slots:
        .word   (39*4 << 8) | 29*4      @ 0x11 FIQ
        .word   (40*4 << 8) | 31*4      @ 0x12 IRQ
        .word   (41*4 << 8) | 33*4      @ 0x13 SVC
        .word   0, 0, 0
        .word   (42*4 << 8) | 35*4      @ 0x17 abort
        .word   0, 0, 0
        .word   (43*4 << 8) | 37*4      @ 0x1B undefined
