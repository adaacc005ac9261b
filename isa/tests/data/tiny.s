@ Tiny ARMv5TE program used by the ElfImage tests (tests/elf.rs).
@ Built with:
@   arm-none-eabi-as -march=armv5te -o tiny.o tiny.s
@   arm-none-eabi-ld -N --use-blx -Ttext=0x8000 -e _start -o tiny.elf tiny.o
@ (-N keeps the file small: a single RWX PT_LOAD with no page alignment padding.)
        .syntax unified
        .text
        .arm
        .global _start
        .type   _start, %function
_start:
        ldr     r0, =magic              @ 0x8000
        ldr     r0, [r0]
        blx     thumb_func
        ldr     r1, =counter
        str     r0, [r1]
        b       _start
        .size   _start, . - _start
        .ltorg

        .thumb
        .global thumb_func
        .type   thumb_func, %function
        .thumb_func
thumb_func:
        push    {r4, lr}
        adds    r0, r0, #1
        bl      leaf
        pop     {r4, pc}
        .size   thumb_func, . - thumb_func

        .type   leaf, %function
        .thumb_func
leaf:
        bx      lr
        .size   leaf, . - leaf

        .data
        .balign 4
        .global magic
        .type   magic, %object
magic:
        .word   0xC0FFEE42
        .size   magic, 4

        .bss
        .balign 4
        .global counter
        .type   counter, %object
counter:
        .space  64
        .size   counter, 64
