import Foundation
import TernCore
import TernMigration

extension PlanBuilder {
    // MARK: - Derived attributes

    /// The derived attributes counting a one-to-many that the destination adds (or whose
    /// derivation changes), for the entities that receive objects.
    package func derivedCounts() -> [TableMigrationPlan.DerivedCount] {
        var counts: [TableMigrationPlan.DerivedCount] = []
        for layout in destination.entities.values.sorted(by: { $0.number < $1.number }) {
            guard let from = mappings[layout.name]?.sourceEntityName, let sourceLayout = source.entities[from] else {
                continue
            }
            for column in layout.attributes where column.derivation != nil {
                guard let counted = StoreSchema.countedRelationship(column.derivation),
                    let toMany = layout.toMany(named: counted),
                    case .inverseForeignKey(let table, let key, _) = toMany.storage
                else { continue }
                if let old = sourceLayout.attribute(named: column.name), old.derivation == column.derivation {
                    // The same count stays, unless links to objects that left the tree are dropped.
                    guard let relationship = source.model.relationship(named: counted, inEntity: from),
                        (try? droppedNumbers(from: relationship.destinationEntityName, to: toMany.destination))?.isEmpty
                            == false
                    else { continue }
                }
                counts.append(
                    TableMigrationPlan.DerivedCount(
                        table: layout.table, column: column.column, numbers: [layout.number], countedTable: table,
                        foreignKey: key))
            }
        }
        return counts
    }

    // MARK: - Altering instead of rebuilding

    /// The alteration that turns the source table into the destination table in place, or nil
    /// when the table must be rebuilt: rows would leave it, a column would be dropped, change
    /// its declared type or be read twice, or a value needs more than an `UPDATE`.
    package func alteration(of table: TableLayout, from copy: TableMigrationPlan.TableCopy) -> TableMigrationPlan
        .TableAlteration?
    {
        guard copy.sourceTable == table.name, let sourceTable = source.tables[table.name] else { return nil }
        let rowNumbers = Set(source.entities.values.filter { $0.table == table.name && !$0.isAbstract }.map(\.number))
        guard rowNumbers.isSubset(of: Set(copy.sourceNumbers)) else { return nil }
        let sourceTypes = Dictionary(uniqueKeysWithValues: sourceTable.columns.map { ($0.name, $0.type) })
        var alteration = TableMigrationPlan.TableAlteration(
            table: table, renamedColumns: [], addedColumns: [], rewrittenColumns: [])
        var consumed: Set<String> = []
        for column in table.columns {
            let byEntity = copy.values[column.name] ?? [:]
            let kinds = Set(byEntity.values)
            if kinds.allSatisfy({ if case .constant = $0 { true } else { false } }) {
                guard sourceTypes[column.name] == nil else { return nil }
                var fill: [Int: DatabaseValue] = [:]
                for (number, value) in byEntity {
                    if case .constant(let constant) = value, constant != .null { fill[number] = constant }
                }
                alteration.addedColumns.append((column, fill))
                continue
            }
            guard kinds.count == 1, let value = kinds.first, value.sourceColumns.count == 1,
                let old = value.sourceColumns.first, sourceTypes[old] == column.type, consumed.insert(old).inserted
            else { return nil }
            // Rows of entities without the destination column must have no value in the source column.
            for number in copy.sourceNumbers where byEntity[number] == nil {
                guard let name = source.entityNames[number], let layout = source.entities[name],
                    !Self.columns(of: layout, in: source).contains(old)
                else { return nil }
            }
            if old != column.name {
                guard sourceTypes[column.name] == nil else { return nil }
                alteration.renamedColumns.append((old, column.name))
            }
            let numbers = Array(byEntity.keys).sorted()
            switch value {
            case .column: break
            case .coalesce(_, let constant):
                alteration.rewrittenColumns.append((column.name, .coalesce(column.name, constant), numbers))
            case .renumbered(_, let map):
                alteration.rewrittenColumns.append((column.name, .renumbered(column.name, map), numbers))
            case .markedInline:
                alteration.rewrittenColumns.append((column.name, .markedInline(column.name), numbers))
            case .resolvedExternal:
                alteration.rewrittenColumns.append((column.name, .resolvedExternal(column.name), numbers))
            default: return nil
            }
        }
        if case .renumbered(_, let map)? = copy.uniformValue(of: "Z_ENT") {
            alteration.rewrittenColumns.append(("Z_ENT", .renumbered("Z_ENT", map), copy.sourceNumbers))
        }
        alteration.rowNumbers = rowNumbers.sorted()
        alteration.droppedColumns = Set(sourceTypes.keys).subtracting(consumed).sorted()
        // Each dropped column and each UPDATE rewrites every row once; a rebuild copies the rows
        // once and builds the table's indexes again. Alter only when that costs no more.
        if !alteration.droppedColumns.isEmpty {
            let updates =
                alteration.rewrittenColumns.count
                + alteration.addedColumns.filter { !$0.values.isEmpty && !alteration.fillsByDefault($0.values) }.count
            guard alteration.droppedColumns.count + updates <= 1 + table.indexes.count else { return nil }
        }
        return alteration
    }
}
