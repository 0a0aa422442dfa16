import Foundation
import TernCore
import Testing

@Suite struct GeneratedKitchenTests {
    @Test func placeholder() {
        #expect(KitchenModel.classes.count == 5)
    }
}
