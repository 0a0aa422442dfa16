import Foundation
import TernCore
import Testing

private struct Item {
    var name: String
    var price: Double
}

private final class Owner {
    var name = ""
    var born: Date?
}

private final class Pet {
    var name = ""
    var nickname: String?
    var price: Decimal?
    var age = 0
    var weight: Double?
    var isVaccinated = false
    var owner: Owner?
    var tags: [String] = []
    var items: [Item] = []
}

@Suite struct PredicateFoundationTests {
    @Test func comparisonsAndLogic() throws {
        let typed = #Predicate<Pet> { $0.age >= 2 && ($0.name == "Rex" || !($0.weight == nil)) }
        #expect(try FetchPredicate(typed) == FetchPredicate("age >= 2 AND (name == 'Rex' OR NOT weight == nil)"))
        let alternatives = #Predicate<Pet> { $0.age == 1 || $0.age == 2 || ($0.age == 3 && $0.age == 4) }
        #expect(try FetchPredicate(alternatives) == FetchPredicate("age == 1 OR age == 2 OR (age == 3 AND age == 4)"))
        let limits = #Predicate<Pet> { 3 < $0.age && $0.age <= 9 && $0.weight != 1.5 && $0.age > -1 }
        #expect(try FetchPredicate(limits) == FetchPredicate("3 < age AND age <= 9 AND weight != 1.5 AND age > -1"))
    }

    @Test func stringsBooleansAndOptionalChains() throws {
        let typed = #Predicate<Pet> { $0.name.contains("ex") && $0.name.starts(with: "R") }
        #expect(try FetchPredicate(typed) == FetchPredicate("name CONTAINS 'ex' AND name BEGINSWITH 'R'"))
        let flag = #Predicate<Pet> { $0.isVaccinated }
        #expect(try FetchPredicate(flag) == FetchPredicate("isVaccinated == TRUE"))
        let chain = #Predicate<Pet> { $0.owner?.name == "Ann" }
        #expect(try FetchPredicate(chain) == FetchPredicate("owner.name == 'Ann'"))
        let constant = #Predicate<Pet> { _ in true }
        #expect(try FetchPredicate(constant) == .constant(true))
    }

    @Test func collections() throws {
        let names = ["Rex", "Max"]
        let typed = #Predicate<Pet> { names.contains($0.name) && $0.tags.contains("cute") && $0.items.count > 2 }
        #expect(
            try FetchPredicate(typed)
                == FetchPredicate("name IN {'Rex', 'Max'} AND tags CONTAINS 'cute' AND items.@count > 2"))
        let any = #Predicate<Pet> { $0.items.contains { $0.price > 3 } }
        #expect(try FetchPredicate(any) == FetchPredicate("ANY items.price > 3.0"))
        let all = #Predicate<Pet> { $0.items.allSatisfy { $0.name != "" } }
        #expect(try FetchPredicate(all) == FetchPredicate("ALL items.name != ''"))
    }

    @Test func customKeyNamesAndValues() throws {
        let cutoff = Date(timeIntervalSinceReferenceDate: 100)
        let typed = #Predicate<Pet> { $0.owner?.born == cutoff }
        let converted = try FetchPredicate(typed) { keyPath in keyPath == \Owner.born ? "birthDate" : nil }
        #expect(converted == (try FetchPredicate("owner.birthDate == CAST(100, 'NSDate')")))
    }

    @Test func convertedPredicatesEvaluateLikeTheOriginal() throws {
        let typed = #Predicate<Pet> { $0.age >= 2 && $0.name.starts(with: "R") }
        let converted = try FetchPredicate(typed)
        for (name, age) in [("Rex", 3), ("Rex", 1), ("Max", 5)] {
            let pet = Pet()
            pet.name = name
            pet.age = age
            let row: [String: PredicateValue] = ["name": .single(.string(name)), "age": .single(.integer(Int64(age)))]
            #expect(try converted.evaluate(with: row) == typed.evaluate(pet))
        }
    }

    @Test func unsupportedExpressionsThrow() {
        let arithmetic = #Predicate<Pet> { $0.age + 1 > 3 }
        #expect(throws: TernError.self) { try FetchPredicate(arithmetic) }
        let compound = #Predicate<Pet> { $0.items.contains { $0.price > 3 && $0.name == "x" } }
        #expect(throws: TernError.self) { try FetchPredicate(compound) }
        let computed = #Predicate<Pet> { $0.name.isEmpty }
        #expect(throws: TernError.self) { try FetchPredicate(computed) }
    }

    @Test func optionalChainsEndingInATestCompareWithTrueFalseAndNil() throws {
        let cases: [(Predicate<Pet>, String)] = [
            (#Predicate { $0.nickname?.starts(with: "R") == true }, "nickname BEGINSWITH 'R'"),
            (#Predicate { true == $0.nickname?.starts(with: "R") }, "nickname BEGINSWITH 'R'"),
            (#Predicate { $0.nickname?.contains("e") == false }, "nickname != nil AND NOT nickname CONTAINS 'e'"),
            (#Predicate { $0.nickname?.contains("e") != true }, "nickname == nil OR NOT nickname CONTAINS 'e'"),
            (#Predicate { $0.nickname?.contains("e") != false }, "nickname == nil OR nickname CONTAINS 'e'"),
            (#Predicate { $0.nickname?.contains("e") == nil }, "nickname == nil"),
            (#Predicate { $0.nickname?.contains("e") != nil }, "nickname != nil"),
            (#Predicate { $0.nickname?.starts(with: "R") ?? false }, "nickname BEGINSWITH 'R'"),
            (#Predicate { $0.owner?.name.starts(with: "A") == true }, "owner.name BEGINSWITH 'A'"),
        ]
        for (typed, format) in cases {
            #expect(try FetchPredicate(typed) == FetchPredicate(format), "\(format)")
        }
        let flag = true
        let captured = #Predicate<Pet> { $0.nickname?.starts(with: "R") == flag }
        #expect(try FetchPredicate(captured) == FetchPredicate("nickname BEGINSWITH 'R'"))
    }

    @Test func nilCoalescingComparesTheValueOrTheFallback() throws {
        let folded = #Predicate<Pet> { ($0.nickname ?? "").starts(with: "R") }
        #expect(try FetchPredicate(folded) == FetchPredicate("nickname != nil AND nickname BEGINSWITH 'R'"))
        let always = #Predicate<Pet> { ($0.nickname ?? "Rex") == "Rex" }
        #expect(try FetchPredicate(always) == FetchPredicate("nickname == nil OR nickname == 'Rex'"))
        let price = #Predicate<Pet> { 5 < ($0.price ?? 0) }
        #expect(
            try FetchPredicate(price) == FetchPredicate("price != nil AND %@ < price", arguments: [.value(.decimal(5))])
        )
        let versus = #Predicate<Pet> { ($0.nickname ?? "") == $0.name }
        #expect(
            try FetchPredicate(versus)
                == FetchPredicate("(nickname != nil AND nickname == name) OR (nickname == nil AND '' == name)"))
        // Each form evaluates as Foundation evaluates the typed predicate.
        for nickname in [nil, "Rex", "Max", ""] as [String?] {
            let pet = Pet()
            pet.nickname = nickname
            pet.name = "Rex"
            let row: [String: PredicateValue] = [
                "nickname": .single(nickname.map { .string($0) }), "name": .single(.string("Rex")),
                "price": .single(nil),
            ]
            for typed in [folded, always, price, versus] {
                #expect(
                    try FetchPredicate(typed).evaluate(with: row) == typed.evaluate(pet),
                    "\(String(describing: nickname))")
            }
        }
    }

    @Test func sortDescriptorsConvertByKeyPathAndOrder() throws {
        #expect(try FetchSort(SortDescriptor(\Pet.age)) == FetchSort(key: "age"))
        #expect(try FetchSort(SortDescriptor(\Pet.name, order: .reverse)) == FetchSort(key: "name", ascending: false))
        #expect(
            try FetchSort(SortDescriptor(\Pet.name, comparator: .lexical, order: .reverse))
                == FetchSort(key: "name", ascending: false))
        #expect(
            try FetchSort(SortDescriptor(\Owner.born)) { $0 == \Owner.born ? "birthDate" : nil }
                == FetchSort(key: "birthDate"))
        // Through a relationship, the key path names no single property.
        #expect(throws: TernError.self) { try FetchSort(SortDescriptor(\Pet.owner?.name)) }
    }
}
