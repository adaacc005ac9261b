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
