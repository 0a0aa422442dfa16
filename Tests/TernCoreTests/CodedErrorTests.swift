import Foundation
import TernCore
import Testing

/// Every error type keeps the error that caused it, without it changing the error's equality.
@Suite struct CodedErrorTests {
    struct Cause: Error, Equatable { var n: Int }

    @Test func theCauseIsKeptAsItWasThrown() {
        let error = TernError(.ioFailure, "could not write the journal", path: "/tmp/j", underlyingError: Cause(n: 7))
        #expect(error.underlyingError as? Cause == Cause(n: 7))
        #expect(TernError(.ioFailure, "no cause").underlyingError == nil)
        var about = TernError(.unreadableStore, "could not read it", objectID: nil, underlyingError: Cause(n: 1))
        #expect(about.underlyingError as? Cause == Cause(n: 1))
        about.underlyingError = nil
        #expect(about.underlyingError == nil)
    }

    @Test func equalityAndHashingLeaveTheCauseOut() {
        let a = TernError(.ioFailure, "could not write", underlyingError: Cause(n: 1))
        let b = TernError(.ioFailure, "could not write", underlyingError: Cause(n: 2))
        #expect(a == b)
        #expect(a.hashValue == b.hashValue)
        #expect(a != TernError(.ioFailure, "could not read", underlyingError: Cause(n: 1)))
    }

    @Test func theChainOfCausesIsWalkedToTheFirst() {
        let first = Cause(n: 3)
        let middle = TernError(.unreadableStore, "the store cannot be read", underlyingError: first)
        let top = TernError(.incompatibleStore, "the store cannot be opened", underlyingError: middle)
        let chain = top.underlyingErrors
        #expect(chain.count == 2)
        #expect((chain.first as? TernError)?.code == .unreadableStore)
        #expect(chain.last as? Cause == first)
        // Any Tern error reads the same way through the protocol.
        let coded: any CodedError = top
        #expect(coded.message == "the store cannot be opened")
        #expect(coded.code.description == "incompatibleStore")
    }
}
