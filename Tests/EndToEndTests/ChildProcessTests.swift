import Foundation
import TestSupport
import Testing

/// Test children have deadlines (`ChildProcess`): a hung one is killed, which ends the reads of its
/// pipes, and its wait fails the test with a message; a signal of the test's own is no timeout.
@Suite struct ChildProcessTests {
    @Test func aHungChildIsKilledAtItsDeadlineAndItsWaitFails() throws {
        let child = ChildProcess("/usr/bin/env", ["sleep", "600"], timeout: 2)
        let out = Pipe()
        child.process.standardOutput = out
        try child.start()
        // Nothing comes and the read would block for ten minutes: the deadline ends it.
        #expect(out.fileHandleForReading.readDataToEndOfFile().isEmpty)
        #expect {
            try child.wait()
        } throws: { error in
            "\(error)".contains("sleep 600") && "\(error)".contains("killed")
        }
        #expect(child.terminationReason == .uncaughtSignal && child.terminationStatus == SIGKILL)
        let run = try Tool.run("/usr/bin/env", ["sleep", "600"], timeout: 2)
        #expect(run.timedOut)
    }

    @Test func aSignalOfTheTestsOwnIsNoTimeout() throws {
        let child = ChildProcess("/usr/bin/env", ["sleep", "600"], timeout: 600)
        try child.start()
        #expect(child.isRunning)
        child.signal(SIGKILL)
        try child.wait()
        #expect(!child.isRunning && child.terminationReason == .uncaughtSignal && child.terminationStatus == SIGKILL)
    }
}
