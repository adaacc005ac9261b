@ Instructions used by sim/tests/arm_bench.rs (one per line, each at its own address).
@ Assembled with: arm-none-eabi-as -mcpu=xscale (ARMv5TE + XScale); encodings read back with
@ arm-none-eabi-objdump -d. Lines with .inst are encodings gas refuses (UNPREDICTABLE forms),
@ hand-derived from the valid form named in the comment.
	.arm
	.syntax unified
	add r0, r0, #1
	eor r1, r1, r0, lsl #3
	ldr r2, [sp, #-4]
	str r1, [sp, #-8]
	mla r3, r0, r1, r3
	movs r4, r1, lsr #2
	sub r5, r5, r4
	orr r7, r7, r2
	cmp r0, r6
	bne .-36
	.inst 0xe7f000f0 @ udf #0: stops the run
